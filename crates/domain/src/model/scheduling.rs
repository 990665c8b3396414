//! The three scheduling settings a job inherits from its organization (spec §2.6): what each
//! setting holds, the organization's default of each, the job's overrides, and the one rule
//! that resolves them into the settings a job read shows.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::model::{
    InterviewNameSetting, InterviewerInfoSetting, RecruitingTeamContactInfoSetting, SettingLevel,
};

/// Declares the values of a setting (its fields without `is_custom`, `is_locked` and `level`)
/// and the conversions between them and the API's setting.
macro_rules! setting_values {
    ($(
        $(#[$doc:meta])* $values:ident of $setting:ident { $($(#[$fdoc:meta])* $field:ident),* $(,)? }
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
        pub struct $values {
            $($(#[$fdoc])* pub $field: bool,)*
        }

        impl $setting {
            /// The setting's values, without where they came from.
            pub fn values(&self) -> $values {
                $values { $($field: self.$field),* }
            }

            /// The setting as resolved: its values and where they came from.
            pub fn from_resolved(r: Resolved<$values>) -> Self {
                Self {
                    is_custom: r.is_custom,
                    $($field: r.values.$field,)*
                    is_locked: r.is_locked,
                    level: r.level,
                }
            }
        }
    )*};
}

setting_values! {
    /// What the interview name setting holds.
    InterviewNameValues of InterviewNameSetting {
        /// Whether interview names are shown to candidates.
        show_interview_name,
    }
    /// What the interviewer information setting holds.
    InterviewerInfoValues of InterviewerInfoSetting {
        /// Whether interviewer information is shown at all.
        can_show_info,
        /// Whether the full name is shown.
        can_show_full_name,
        /// Whether the job title is shown.
        can_show_job_title,
        /// Whether the LinkedIn profile is shown.
        can_show_linkedin,
        /// Whether the email address is shown.
        can_show_email,
        /// Whether the profile picture is shown.
        can_show_profile_picture,
        /// Whether the pronouns are shown.
        can_show_pronouns,
        /// Whether the biography is shown.
        can_show_bio,
    }
    /// What the recruiting team contact information setting holds.
    ContactInfoValues of RecruitingTeamContactInfoSetting {
        /// Whether the recruiter is shown.
        show_recruiter,
        /// Whether the coordinator is shown.
        show_coordinator,
        /// Whether the job title is shown.
        can_show_job_title,
        /// Whether the LinkedIn profile is shown.
        can_show_linkedin,
        /// Whether the profile picture is shown.
        can_show_profile_picture,
        /// Whether the pronouns are shown.
        can_show_pronouns,
        /// Whether the biography is shown.
        can_show_bio,
        /// Whether the phone number is shown.
        can_show_phone,
    }
}

/// An organization's default of one setting: its values, and whether it is locked (then no
/// job may override it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct OrgDefault<V> {
    /// The values every job has unless it overrides them.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub values: V,
    /// Whether jobs are held to the default.
    pub is_locked: bool,
}

/// An organization's defaults of the three scheduling settings. A document that leaves them
/// out gets [`SchedulingDefaults::BUILT_IN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SchedulingDefaults {
    /// Whether interview names are shown.
    pub interview_name_setting: OrgDefault<InterviewNameValues>,
    /// What candidates are shown about their interviewers.
    pub interviewer_info_setting: OrgDefault<InterviewerInfoValues>,
    /// What candidates are shown about the recruiting team's contacts.
    pub recruiting_team_contact_info_setting: OrgDefault<ContactInfoValues>,
}

impl SchedulingDefaults {
    /// The defaults of an organization that sets none: interview names shown; of interviewers
    /// their name, job title, picture and pronouns; of the recruiting team the recruiter and
    /// the coordinator with their job title and pronouns; nothing locked.
    pub const BUILT_IN: Self = Self {
        interview_name_setting: OrgDefault {
            values: InterviewNameValues { show_interview_name: true },
            is_locked: false,
        },
        interviewer_info_setting: OrgDefault {
            values: InterviewerInfoValues {
                can_show_info: true,
                can_show_full_name: true,
                can_show_job_title: true,
                can_show_linkedin: false,
                can_show_email: false,
                can_show_profile_picture: true,
                can_show_pronouns: true,
                can_show_bio: false,
            },
            is_locked: false,
        },
        recruiting_team_contact_info_setting: OrgDefault {
            values: ContactInfoValues {
                show_recruiter: true,
                show_coordinator: true,
                can_show_job_title: true,
                can_show_linkedin: false,
                can_show_profile_picture: false,
                can_show_pronouns: true,
                can_show_bio: false,
                can_show_phone: false,
            },
            is_locked: false,
        },
    };

    /// A job's three settings, resolved from these defaults and the job's `overrides`.
    pub fn resolve(
        &self,
        overrides: &SchedulingOverrides,
    ) -> (InterviewNameSetting, InterviewerInfoSetting, RecruitingTeamContactInfoSetting) {
        (
            InterviewNameSetting::from_resolved(resolve(
                &self.interview_name_setting,
                overrides.interview_name_setting.as_ref(),
            )),
            InterviewerInfoSetting::from_resolved(resolve(
                &self.interviewer_info_setting,
                overrides.interviewer_info_setting.as_ref(),
            )),
            RecruitingTeamContactInfoSetting::from_resolved(resolve(
                &self.recruiting_team_contact_info_setting,
                overrides.recruiting_team_contact_info_setting.as_ref(),
            )),
        )
    }
}

impl Default for SchedulingDefaults {
    fn default() -> Self {
        Self::BUILT_IN
    }
}

/// The settings a job overrides, each `None` when the job takes its organization's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SchedulingOverrides {
    /// The job's interview name setting.
    pub interview_name_setting: Option<InterviewNameValues>,
    /// The job's interviewer information setting.
    pub interviewer_info_setting: Option<InterviewerInfoValues>,
    /// The job's recruiting team contact information setting.
    pub recruiting_team_contact_info_setting: Option<ContactInfoValues>,
}

/// A setting as resolved for a job: its values and where they came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Resolved<V> {
    /// The values the job has.
    pub values: V,
    /// Whether they are the job's own (`level` is then [`SettingLevel::Job`]).
    pub is_custom: bool,
    /// Whether the organization's default is locked.
    pub is_locked: bool,
    /// Where the values came from.
    pub level: SettingLevel,
}

impl<V> Resolved<V> {
    /// A setting resolved earlier and kept: its values, whether they are the job's own and
    /// whether the default is locked; its level follows from whose values they are.
    pub fn kept(values: V, is_custom: bool, is_locked: bool) -> Self {
        let level = if is_custom { SettingLevel::Job } else { SettingLevel::Org };
        Self { values, is_custom, is_locked, level }
    }
}

/// Resolves one setting: a locked default wins; otherwise the job's override, when it has
/// one; otherwise the default.
pub fn resolve<V: Clone>(default: &OrgDefault<V>, job: Option<&V>) -> Resolved<V> {
    match job {
        Some(values) if !default.is_locked => Resolved {
            values: values.clone(),
            is_custom: true,
            is_locked: false,
            level: SettingLevel::Job,
        },
        _ => Resolved {
            values: default.values.clone(),
            is_custom: false,
            is_locked: default.is_locked,
            level: SettingLevel::Org,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_default_wins_an_override_wins_an_unlocked_one() {
        let open = OrgDefault {
            values: InterviewNameValues { show_interview_name: true },
            is_locked: false,
        };
        let locked = OrgDefault { is_locked: true, ..open };
        let own = InterviewNameValues { show_interview_name: false };
        let r = resolve(&open, Some(&own));
        assert_eq!(
            (r.values, r.is_custom, r.is_locked, r.level),
            (own, true, false, SettingLevel::Job)
        );
        let r = resolve(&locked, Some(&own));
        assert_eq!(
            (r.values, r.is_custom, r.is_locked, r.level),
            (locked.values, false, true, SettingLevel::Org)
        );
        let r = resolve(&open, None);
        assert_eq!((r.values, r.is_custom, r.level), (open.values, false, SettingLevel::Org));
    }
}
