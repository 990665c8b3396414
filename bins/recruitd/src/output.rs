//! What the commands print for the operator: lines on standard output.

use std::io::Write;

/// Writes `line` and a newline to standard output; a failed write is ignored.
pub(crate) fn print(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// `value` as one line of JSON, or the failure to write it: never an empty line.
pub(crate) fn json_line<T: serde::Serialize>(value: &T) -> Result<String, crate::Failure> {
    serde_json::to_string(value)
        .map_err(|e| crate::Failure(format!("the output could not be written as JSON: {e}")))
}

/// Prints `value` as one line of JSON.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) -> Result<(), crate::Failure> {
    print(&json_line(value)?);
    Ok(())
}

/// A refusal of the service, with its reasons field by field.
pub(crate) fn problem(e: &recruit_service::ServiceError) -> String {
    let mut text = e.message.clone();
    for detail in &e.details {
        let pairs: Vec<String> = detail.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        text.push_str(&format!("\n  {}", pairs.join("; ")));
    }
    text
}
