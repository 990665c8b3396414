//! Syslog over TLS: each entry an RFC 5424 message, sent in an RFC 5425 frame (its length in
//! octets, a space, the message). The header carries the entry's own time, the ledger as
//! MSGID and the chain's coordinates as structured data (`id`, `org`, `pos`, `hash`, `prev`),
//! so that a SIEM that parses only the header still orders and dedups; the message is the
//! entry's export line.

use recruit_domain::Timestamp;

/// What a stream's messages say of their sender, as an operator sets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sender {
    /// The facility, 0 to 23 (13, log audit, by default).
    pub facility: u8,
    /// The severity, 0 to 7 (6, informational, by default).
    pub severity: u8,
    /// HOSTNAME: the server's name as the SIEM should know it; none is `-`.
    pub hostname: Option<String>,
    /// APP-NAME (`recruitd` by default).
    pub app_name: String,
    /// The SD-ID of the chain's coordinates: `name@<private enterprise number>`.
    pub sd_id: String,
}

impl Sender {
    /// Why these settings cannot make valid messages: the field and what is wrong with it.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = vec![];
        if self.facility > 23 {
            problems.push(("facility", "A facility is 0 to 23.".into()));
        }
        if self.severity > 7 {
            problems.push(("severity", "A severity is 0 to 7.".into()));
        }
        if let Some(host) = &self.hostname
            && !printable(host, 255)
        {
            problems
                .push(("hostname", "A host name is 1 to 255 printable ASCII characters.".into()));
        }
        if !printable(&self.app_name, 48) {
            problems
                .push(("app_name", "An app name is 1 to 48 printable ASCII characters.".into()));
        }
        let name_ok = printable(&self.sd_id, 32) && !self.sd_id.contains(['=', ']', '"']);
        if !name_ok
            || !self.sd_id.split_once('@').is_some_and(|(n, pen)| !n.is_empty() && is_number(pen))
        {
            problems.push((
                "sd_id",
                "An SD-ID is name@number (a private enterprise number), at most 32 characters."
                    .into(),
            ));
        }
        problems
    }
}

/// Whether `text` is 1 to `max` characters of printable US-ASCII (`!` to `~`), as RFC 5424's
/// header fields must be.
fn printable(text: &str, max: usize) -> bool {
    !text.is_empty() && text.len() <= max && text.bytes().all(|b| (33..=126).contains(&b))
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// A value of structured data, with `"`, `\` and `]` escaped.
fn escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The message of an entry written at `at` to `ledger` (MSGID), with the chain's coordinates
/// `params` (names of printable ASCII) and `msg`, the export line without its line feed.
/// Senders are checked ([`Sender::problems`]) before they are used.
pub fn message(
    sender: &Sender,
    at: Timestamp,
    ledger: &str,
    params: &[(&str, &str)],
    msg: &[u8],
) -> Vec<u8> {
    let pri = u16::from(sender.facility) * 8 + u16::from(sender.severity);
    let hostname = sender.hostname.as_deref().unwrap_or("-");
    let mut data = format!("[{}", sender.sd_id);
    for (name, value) in params {
        data.push_str(&format!(" {name}=\"{}\"", escaped(value)));
    }
    data.push(']');
    let mut out =
        format!("<{pri}>1 {at} {hostname} {} - {ledger} {data} ", sender.app_name).into_bytes();
    // A UTF-8 message is marked with the byte order mark (RFC 5424 §6.4).
    out.extend_from_slice(b"\xEF\xBB\xBF");
    out.extend_from_slice(msg.strip_suffix(b"\n").unwrap_or(msg));
    out
}

/// `message` in its RFC 5425 frame: its length in octets, a space, the message.
pub fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = format!("{} ", message.len()).into_bytes();
    out.extend_from_slice(message);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender() -> Sender {
        Sender {
            facility: 13,
            severity: 6,
            hostname: Some("recruitd.example.com".into()),
            app_name: "recruitd".into(),
            sd_id: "recruitd@32473".into(),
        }
    }

    #[test]
    fn an_entry_is_a_5424_message_with_its_time_ledger_and_coordinates() {
        let at: Timestamp = "2026-11-28T01:02:03.456789Z".parse().unwrap();
        let params = [("id", "pal_1"), ("pos", "41"), ("note", "q\"uote b\\slash br]acket")];
        let msg = message(&sender(), at, "privacy", &params, b"{\"ledger\":\"privacy\"}\n");
        let text = String::from_utf8(msg).unwrap();
        assert_eq!(
            text,
            "<110>1 2026-11-28T01:02:03.456789Z recruitd.example.com recruitd - privacy \
             [recruitd@32473 id=\"pal_1\" pos=\"41\" note=\"q\\\"uote b\\\\slash br\\]acket\"] \
             \u{feff}{\"ledger\":\"privacy\"}"
        );
        let anonymous = Sender { hostname: None, ..sender() };
        let text = String::from_utf8(message(&anonymous, at, "privacy", &[], b"{}")).unwrap();
        assert!(text.starts_with(
            "<110>1 2026-11-28T01:02:03.456789Z - recruitd - privacy [recruitd@32473] "
        ));
    }

    #[test]
    fn a_frame_counts_octets_not_characters() {
        let message = "<110>1 - - - - - - 한국어".as_bytes();
        let framed = frame(message);
        assert!(framed.starts_with(format!("{} <110>", message.len()).as_bytes()));
        assert_eq!(framed.len(), message.len() + message.len().to_string().len() + 1);
    }

    #[test]
    fn settings_that_make_invalid_messages_are_named() {
        assert!(sender().problems().is_empty());
        let bad = Sender {
            facility: 24,
            severity: 8,
            hostname: Some("two words".into()),
            app_name: "a".repeat(49),
            sd_id: "recruitd".into(),
        };
        let fields: Vec<_> = bad.problems().into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["facility", "severity", "hostname", "app_name", "sd_id"]);
        for sd_id in ["x@", "@1", "a=b@1", "recruitd@1a", "recruitd@3247332473324733247332473"] {
            assert!(!Sender { sd_id: sd_id.into(), ..sender() }.problems().is_empty(), "{sd_id}");
        }
    }
}
