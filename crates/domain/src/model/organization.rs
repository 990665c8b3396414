//! An organization and its scheduling defaults (spec §2.7).

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::OrganizationId;
use crate::open_enum::open_enum;

/// An organization with its scheduling defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Organization {
    /// The organization's identifier.
    pub id: OrganizationId,
    /// The organization's name.
    pub name: String,
    /// The organization's domain, such as `example.com`.
    pub domain: String,
    /// The scheduling defaults.
    pub settings: OrganizationSettings,
    /// The defaults of the scheduling settings its jobs inherit.
    pub scheduling_defaults: crate::model::SchedulingDefaults,
    /// Where the organization keeps the truth of each profile field of its users.
    pub profile_field_sources: crate::model::ProfileFieldSources,
    /// A link that opens the organization in the web app.
    pub app_url: String,
}

/// An organization's scheduling defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct OrganizationSettings {
    /// When interviews may be scheduled, per weekday.
    pub work_hours: Vec<WorkHours>,
    /// How many interviews an interviewer takes per day and week.
    pub interviewer_load_limits: InterviewerLoadLimits,
    /// Free time kept around each interview.
    pub interview_buffer: InterviewBuffer,
    /// Minutes reserved after an interview to write feedback.
    pub feedback_writing_time_minutes: i32,
    /// Calendar keywords that mark events as conflicts of each kind.
    pub conflict_keywords: ConflictKeywords,
}

/// The working hours of one weekday.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct WorkHours {
    /// The weekday.
    pub day: Weekday,
    /// Start of the working hours, as given (the specification leaves the format open).
    pub start: String,
    /// End of the working hours, as given.
    pub end: String,
}

open_enum! {
    /// A day of the week.
    pub enum Weekday {
        /// Monday.
        Monday = "MONDAY",
        /// Tuesday.
        Tuesday = "TUESDAY",
        /// Wednesday.
        Wednesday = "WEDNESDAY",
        /// Thursday.
        Thursday = "THURSDAY",
        /// Friday.
        Friday = "FRIDAY",
        /// Saturday.
        Saturday = "SATURDAY",
        /// Sunday.
        Sunday = "SUNDAY",
    }
}

/// How much an interviewer takes on per day and per week.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct InterviewerLoadLimits {
    /// The limits per day.
    pub daily: LoadLimit,
    /// The limits per week.
    pub weekly: LoadLimit,
}

/// The limits of one period.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct LoadLimit {
    /// The most an interviewer takes.
    pub maximum: MaximumLoad,
    /// The least an interviewer is expected to take.
    pub minimum: MinimumLoad,
}

/// An upper bound of interviewer load.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct MaximumLoad {
    /// The bound.
    pub limit: i32,
    /// What the bound counts.
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub kind: LoadLimitType,
}

open_enum! {
    /// What an upper bound of interviewer load counts.
    pub enum LoadLimitType {
        /// The number of interviews.
        NumberOfInterviews = "NUMBER_OF_INTERVIEWS",
    }
}

/// A lower bound of interviewer load.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct MinimumLoad {
    /// The number of interviews.
    pub interviews: i32,
    /// The minutes of interviews.
    pub minutes: i32,
}

/// Free time kept around each interview.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct InterviewBuffer {
    /// Minutes kept free before.
    pub before_minutes: i32,
    /// Minutes kept free after.
    pub after_minutes: i32,
}

/// Calendar keywords that mark events as conflicts of each kind.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct ConflictKeywords {
    /// Keywords of out-of-office events.
    pub out_of_office: Vec<String>,
    /// Keywords of events to avoid scheduling over.
    pub avoid: Vec<String>,
    /// Keywords of events that may be scheduled over if needed.
    pub available_if_needed: Vec<String>,
    /// Keywords of time blocked for recruiting.
    pub recruiting_block: Vec<String>,
}
