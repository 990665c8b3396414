//! User profiles (spec §7.2): the profile as the API shows it, the fields the API may change,
//! and where each organization keeps the truth of each of them.

use std::fmt;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

use crate::model::Role;
use crate::{Timestamp, UserId};

/// A user's profile as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct UserProfile {
    /// The user's identifier.
    pub id: UserId,
    /// The user's name.
    pub name: String,
    /// The user's email address.
    pub email: String,
    /// What the user may do in the organization.
    pub role: Role,
    /// The user's job title, if any.
    pub title: Option<String>,
    /// The user's manager, a user of the same organization, if any.
    pub manager: Option<UserId>,
    /// The user's LinkedIn profile, an `https` URL, if any.
    pub linkedin_url: Option<String>,
    /// When the user was created.
    pub created_at: Timestamp,
    /// When the profile last changed.
    pub updated_at: Timestamp,
    /// A link that opens the user in the web app.
    pub app_url: String,
    /// The profile's entity tag, as the `ETag` header carries it: send it back in `If-Match`
    /// (or the tool's `if_match`) to update only the profile as read.
    pub etag: String,
}

/// A field of a profile that the API may change, and whose source of truth an organization
/// may delegate to a directory or SCIM sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProfileField {
    /// `name`.
    Name,
    /// `title`.
    Title,
    /// `manager`.
    Manager,
    /// `linkedin_url`.
    LinkedinUrl,
}

impl ProfileField {
    /// Every field, in the order the API lists them.
    pub const ALL: [Self; 4] = [Self::Name, Self::Title, Self::Manager, Self::LinkedinUrl];

    /// The field's name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Title => "title",
            Self::Manager => "manager",
            Self::LinkedinUrl => "linkedin_url",
        }
    }

    /// The field of this name, exactly.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

impl fmt::Display for ProfileField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Where an organization keeps the truth of a profile field: a closed set of values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "SCREAMING_SNAKE_CASE"))]
pub enum FieldSource {
    /// This API: clients may change the field.
    #[default]
    Api,
    /// A directory sync (such as an HR system's): the API refuses changes to the field.
    Directory,
    /// SCIM provisioning: the API refuses changes to the field.
    Scim,
}

impl FieldSource {
    /// Every source.
    pub const ALL: [Self; 3] = [Self::Api, Self::Directory, Self::Scim];

    /// The value as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Api => "API",
            Self::Directory => "DIRECTORY",
            Self::Scim => "SCIM",
        }
    }

    /// Parses the wire value, exactly.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// An organization's source of truth for each profile field; a field left out of a document
/// is [`FieldSource::Api`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct ProfileFieldSources {
    /// Where `name` is kept.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: FieldSource,
    /// Where `title` is kept.
    #[cfg_attr(feature = "serde", serde(default))]
    pub title: FieldSource,
    /// Where `manager` is kept.
    #[cfg_attr(feature = "serde", serde(default))]
    pub manager: FieldSource,
    /// Where `linkedin_url` is kept.
    #[cfg_attr(feature = "serde", serde(default))]
    pub linkedin_url: FieldSource,
}

impl ProfileFieldSources {
    /// Where `field` is kept.
    pub fn get(&self, field: ProfileField) -> FieldSource {
        match field {
            ProfileField::Name => self.name,
            ProfileField::Title => self.title,
            ProfileField::Manager => self.manager,
            ProfileField::LinkedinUrl => self.linkedin_url,
        }
    }

    /// The sync that keeps `field`, when it is not this API: a change of it through the API is
    /// refused, even to the value it has (spec §7.2).
    pub fn sync_source(&self, field: ProfileField) -> Option<FieldSource> {
        Some(self.get(field)).filter(|s| *s != FieldSource::Api)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fields_kept_by_a_sync_are_refused() {
        let sources = ProfileFieldSources {
            name: FieldSource::Scim,
            title: FieldSource::Directory,
            ..ProfileFieldSources::default()
        };
        let refused: Vec<_> = ProfileField::ALL
            .into_iter()
            .filter_map(|f| Some((f, sources.sync_source(f)?)))
            .collect();
        assert_eq!(
            refused,
            [
                (ProfileField::Name, FieldSource::Scim),
                (ProfileField::Title, FieldSource::Directory)
            ]
        );
        assert!(ProfileField::ALL.iter().all(|f| ProfileField::from_name(f.as_str()) == Some(*f)));
        assert_eq!(ProfileField::from_name("email"), None);
        assert!(FieldSource::ALL.iter().all(|s| FieldSource::from_wire(s.as_str()) == Some(*s)));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn sources_left_out_are_the_api_and_unknown_fields_are_refused() {
        let sources: ProfileFieldSources =
            serde_json::from_str(r#"{"name": "SCIM", "title": "DIRECTORY"}"#).unwrap();
        assert_eq!(sources.manager, FieldSource::Api);
        assert_eq!(sources.name, FieldSource::Scim);
        assert!(serde_json::from_str::<ProfileFieldSources>(r#"{"email": "SCIM"}"#).is_err());
        assert!(serde_json::from_str::<ProfileFieldSources>(r#"{"name": "LDAP"}"#).is_err());
    }
}
