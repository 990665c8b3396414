//! The inputs of operations: one struct per operation, built by serde from the [`Arguments`] a
//! transport collected by the operation's declared parameters ([`crate::Spec::params`]), so
//! that REST and the tool interface fill the same struct by the same rules. A transport finds
//! only problems of its own syntax (an unknown or repeated parameter, a value of the wrong
//! JSON type) and hands them over with the values; the service validates the values, after
//! authorization, and reports every problem at once.

use recruit_domain::ErrorDetail;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ServiceError;
use crate::operation::{OperationKind, RequestBody};
use crate::problems;

/// Where a REST request carries a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A segment of the path, `{name}` in the template.
    Path,
    /// The query string.
    Query,
    /// A header field.
    Header,
}

/// What a parameter's value is, and how each interface writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Text: a JSON string among a tool's arguments.
    Text,
    /// An integer: text in a query, a JSON number among a tool's arguments; kept as its text
    /// for the service to check.
    Integer,
    /// A list of text: one query parameter with values separated by commas (form style, not
    /// exploded), a JSON array of strings among a tool's arguments.
    TextList,
    /// A boolean: `true` or `false` in a query, a JSON boolean among a tool's arguments; kept
    /// as its text for the service to check.
    Boolean,
}

/// One parameter of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name among a tool's arguments and in the operation's input struct: snake case.
    pub name: &'static str,
    /// Its name in the REST API: the path's placeholder, the query parameter or the header.
    pub rest: &'static str,
    /// Where a REST request carries it.
    pub place: Place,
    /// Its value's shape.
    pub shape: Shape,
}

impl Param {
    /// A query parameter, named alike in both interfaces.
    pub const fn query(name: &'static str, shape: Shape) -> Self {
        Self { name, rest: name, place: Place::Query, shape }
    }

    /// A path parameter (text): `rest` in the template, `name` among a tool's arguments,
    /// where it is required.
    pub const fn path(name: &'static str, rest: &'static str) -> Self {
        Self { name, rest, place: Place::Path, shape: Shape::Text }
    }

    /// A header, `rest` in the REST API (whose syntax the HTTP layer reads), `name` among a
    /// tool's arguments.
    pub const fn header(name: &'static str, rest: &'static str, shape: Shape) -> Self {
        Self { name, rest, place: Place::Header, shape }
    }
}

/// An operation's input as a transport collected it: values by their snake-case names, the
/// body, and the problems the transport found. [`crate::Operation::parse`] turns it into the
/// operation's input struct.
#[derive(Debug)]
pub struct Arguments {
    kind: OperationKind,
    values: Map<String, Value>,
    body: Option<Vec<u8>>,
    problems: Vec<ErrorDetail>,
}

impl Arguments {
    /// Nothing yet, for an operation of `kind` called through the REST API.
    pub fn rest(kind: OperationKind) -> Self {
        Self { kind, values: Map::new(), body: None, problems: vec![] }
    }

    /// The arguments of `kind` as the REST API takes them: its path parameters by placeholder
    /// (`streamId`) and its body. What a transport without a URL of its own (the console, the
    /// CLI) hands the service.
    pub fn rest_call(kind: OperationKind, path: &[(&str, String)], body: Option<Vec<u8>>) -> Self {
        let mut arguments = Self::rest(kind);
        for (placeholder, value) in path {
            arguments.path(placeholder, value.clone());
        }
        arguments.body = body;
        arguments
    }

    /// The path parameter `{placeholder}`'s value, percent-decoded.
    pub fn path(&mut self, placeholder: &str, value: String) {
        if let Some(param) = self.kind.params_in(Place::Path).find(|p| p.rest == placeholder) {
            self.values.insert(param.name.into(), Value::String(value));
        }
    }

    /// The query's parameters, decoded, in order: unknown and repeated ones are problems,
    /// each reported once.
    pub fn query(&mut self, pairs: impl IntoIterator<Item = (String, String)>) {
        let mut reported: Vec<String> = vec![];
        for (name, value) in pairs {
            let param = self.kind.params_in(Place::Query).find(|p| p.rest == name);
            let problem = match param {
                Some(p) if !self.values.contains_key(p.name) => {
                    let value = match p.shape {
                        Shape::TextList => list(&value),
                        Shape::Text | Shape::Integer | Shape::Boolean => Value::String(value),
                    };
                    self.values.insert(p.name.into(), value);
                    continue;
                }
                Some(_) => problems::repeated_parameter(&name),
                None => problems::unknown_parameter(&name),
            };
            if !reported.contains(&name) {
                self.problems.push(problem);
                reported.push(name);
            }
        }
    }

    /// A header parameter's value, out of its HTTP syntax, or the problem of its syntax.
    pub fn header(&mut self, param: &Param, value: Result<Option<String>, String>) {
        match value {
            Ok(Some(value)) => {
                self.values.insert(param.name.into(), Value::String(value));
            }
            Ok(None) => {}
            Err(reason) => self.problems.push(ErrorDetail::field(param.rest, reason)),
        }
    }

    /// The request body, read and found usable (the HTTP layer checked its media type).
    pub fn body(&mut self, body: Vec<u8>) {
        self.body = Some(body);
    }

    /// A problem the transport found, reported with the service's own.
    pub fn problem(&mut self, problem: ErrorDetail) {
        self.problems.push(problem);
    }

    /// A tool call's arguments for an operation of `kind`: JSON types checked by the
    /// parameters' shapes, a null parameter counted as absent, unknown arguments problems, and
    /// the body's members gathered into the body as REST takes it, so that the same call is the
    /// same request through either interface. Arguments larger than the operation's body limit
    /// are PAYLOAD_TOO_LARGE, as on REST.
    pub fn tool(kind: OperationKind, arguments: &Map<String, Value>) -> Result<Self, ServiceError> {
        let spec = kind.spec();
        let size = json_size(arguments);
        if size > spec.body_limit {
            return Err(too_large(spec.body_limit));
        }
        let mut this = Self::rest(kind);
        let mut body = Map::new();
        for (name, value) in arguments {
            match kind.param(name) {
                Some(_) if value.is_null() => {}
                Some(param) => {
                    if let Some(value) = typed(param, value, &mut this.problems) {
                        this.values.insert(param.name.into(), value);
                    }
                }
                None => match spec.body {
                    RequestBody::Json(members) if members.contains(&name.as_str()) => {
                        body.insert(name.clone(), value.clone());
                    }
                    RequestBody::MergePatch => {
                        body.insert(name.clone(), value.clone());
                    }
                    RequestBody::Json(_) | RequestBody::None => {
                        this.problems.push(problems::unknown_parameter(name));
                    }
                },
            }
        }
        for param in kind.params_in(Place::Path) {
            if !arguments.contains_key(param.name) {
                this.problems.push(problems::missing(param.name));
            }
        }
        if spec.body != RequestBody::None {
            // Serializing a JSON value does not fail.
            this.body = serde_json::to_vec(&Value::Object(body)).ok();
        }
        Ok(this)
    }

    /// The operation's input struct. A struct that does not fit its parameters is the
    /// server's fault, INTERNAL; the tests build every operation's.
    pub(crate) fn input<T: Input>(self) -> Result<T, ServiceError> {
        let mut input: T = serde_json::from_value(Value::Object(self.values)).map_err(|e| {
            ServiceError::internal_because(format!(
                "the input of {} did not build: {e}",
                self.kind.operation_id()
            ))
        })?;
        input.finish(self.body, self.problems);
        Ok(input)
    }
}

/// PAYLOAD_TOO_LARGE for a body or tool arguments over `limit` bytes.
pub fn too_large(limit: usize) -> ServiceError {
    ServiceError::new(
        recruit_domain::ErrorCode::PayloadTooLarge,
        format!("The request body exceeds {limit} bytes."),
    )
}

/// The values of a query's list: none for an empty parameter.
fn list(value: &str) -> Value {
    if value.is_empty() {
        Value::Array(vec![])
    } else {
        Value::Array(value.split(',').map(|v| Value::String(v.to_owned())).collect())
    }
}

/// A tool argument's value in the shape REST gives it, or the problem of its JSON type.
fn typed(param: &Param, value: &Value, problems: &mut Vec<ErrorDetail>) -> Option<Value> {
    let name = param.name;
    match (param.shape, value) {
        (Shape::Text, Value::String(_)) => Some(value.clone()),
        (Shape::Integer, Value::Number(n)) => Some(Value::String(n.to_string())),
        (Shape::Boolean, Value::Bool(b)) => Some(Value::String(b.to_string())),
        (Shape::TextList, Value::Array(items)) if items.iter().all(Value::is_string) => {
            Some(value.clone())
        }
        (Shape::Text, _) => {
            problems.push(problems::wrong_type(name, "a string"));
            // A path parameter of the wrong type is reported once, not again as malformed.
            (param.place == Place::Path).then(|| Value::String(String::new()))
        }
        (Shape::Integer, _) => {
            problems.push(problems::wrong_type(name, "an integer"));
            None
        }
        (Shape::TextList, _) => {
            problems.push(problems::wrong_type(name, "an array of strings"));
            None
        }
        (Shape::Boolean, _) => {
            problems.push(problems::wrong_type(name, "a boolean"));
            None
        }
    }
}

/// The length of `value`'s JSON text, counted without writing it anywhere.
fn json_size(value: &Map<String, Value>) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a JSON value into a counter does not fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// An operation's input struct: its fields are the operation's parameters by their snake-case
/// names; the body and the transport's problems are handed to it after.
pub trait Input: DeserializeOwned {
    /// Takes the body and the transport's problems.
    fn finish(&mut self, body: Option<Vec<u8>>, problems: Vec<ErrorDetail>);
}

/// Declares an input struct: serde fills the fields from the parameters; `problems` (and
/// `body`, when named) come from the transport.
macro_rules! input {
    ($(#[$doc:meta])* $name:ident $(, body: $body_doc:literal)? { $($(#[$fdoc:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: $ty,)*
            $(
                #[doc = $body_doc]
                #[serde(skip)]
                pub body: Option<Vec<u8>>,
            )?
            /// Problems the transport found itself (an unknown or repeated parameter, a value
            /// of the wrong JSON type), reported together with the service's own.
            #[serde(skip)]
            pub problems: Vec<ErrorDetail>,
        }

        impl Input for $name {
            fn finish(&mut self, _body: Option<Vec<u8>>, problems: Vec<ErrorDetail>) {
                $(
                    let _: &str = $body_doc;
                    self.body = _body;
                )?
                self.problems = problems;
            }
        }
    };
}

input! {
    /// The input of an operation without parameters: only the transport's problems (such as
    /// a parameter it does not have).
    NoParams {}
}

input! {
    /// The parameters of listing the privacy audit ledger, raw.
    ListParams {
        /// `timestamp_gte`, required.
        timestamp_gte: Option<String>,
        /// `timestamp_lt`, required.
        timestamp_lt: Option<String>,
        /// `limit`, 1 to 100, default 25.
        limit: Option<String>,
        /// The values of `ids`, when the parameter was given (possibly none).
        ids: Option<Vec<String>>,
        /// `cursor`, from the previous page.
        cursor: Option<String>,
        /// `account_id`: only this account's entries.
        account_id: Option<String>,
        /// `activity_category`: only entries of this category.
        activity_category: Option<String>,
        /// `access_menu`: only entries of this product area.
        access_menu: Option<String>,
        /// `data_subject_id`: only entries about this user or candidate.
        data_subject_id: Option<String>,
        /// `ip_address`: only entries that recorded this address.
        ip_address: Option<String>,
        /// `outside_work_hours`: only entries outside (`true`) or within (`false`) the work
        /// hours.
        outside_work_hours: Option<String>,
    }
}

input! {
    /// The parameters of exporting the privacy audit ledger, raw.
    ExportParams {
        /// `timestamp_gte`, required.
        timestamp_gte: Option<String>,
        /// `timestamp_lt`, required.
        timestamp_lt: Option<String>,
        /// The values of `ids`, when the parameter was given (possibly none).
        ids: Option<Vec<String>>,
        /// `account_id`: only this account's entries.
        account_id: Option<String>,
        /// `activity_category`: only entries of this category.
        activity_category: Option<String>,
        /// `access_menu`: only entries of this product area.
        access_menu: Option<String>,
        /// `data_subject_id`: only entries about this user or candidate.
        data_subject_id: Option<String>,
        /// `ip_address`: only entries that recorded this address.
        ip_address: Option<String>,
        /// `outside_work_hours`: only entries outside (`true`) or within (`false`) the work
        /// hours.
        outside_work_hours: Option<String>,
        /// `after_position`: only entries after this position of the chain, in its order.
        after_position: Option<String>,
        /// `format`: `ndjson` (the default) or `csv`.
        format: Option<String>,
    }
}

input! {
    /// The parameters of reading a job, raw.
    GetJobParams {
        /// The job's identifier, in any accepted spelling.
        job_id: String,
    }
}

input! {
    /// The parameters of a month's review, raw.
    ReviewParams {
        /// The month, `YYYY-MM`.
        month: String,
    }
}

input! {
    /// The input of a decision on a download of a month's review, raw.
    DecideParams, body: "The body's JSON text, `{\"status\": …, \"reason\": …}`; `None` when the transport found it unusable (and said why in `problems`)." {
        /// The month, `YYYY-MM`.
        month: String,
        /// The download's entry id, in any accepted spelling.
        entry_id: String,
    }
}

input! {
    /// The input of an explanation of a download, raw.
    ExplainParams, body: "The body's JSON text, `{\"explanation\": …}`; `None` when the transport found it unusable (and said why in `problems`)." {
        /// The month, `YYYY-MM`.
        month: String,
        /// The download's entry id, in any accepted spelling.
        entry_id: String,
    }
}

input! {
    /// The input of an operation that takes a JSON body and nothing else (replacing the review
    /// rules, setting single sign-on), raw.
    BodyParams, body: "The body's JSON text; `None` when the transport found it unusable (and said why in `problems`)." {}
}

input! {
    /// The input of signing off a month's review, raw.
    SignOffParams, body: "The body's JSON text, `{\"note\": …}`; `None` when the transport found it unusable (and said why in `problems`)." {
        /// The month, `YYYY-MM`.
        month: String,
    }
}

input! {
    /// The parameters of an operation on one log stream, raw.
    LogStreamParams {
        /// The stream's identifier, in any accepted spelling.
        stream_id: String,
    }
}

input! {
    /// The input of rotating a log stream's signing secret, raw.
    RotateSecretParams, body: "The body's JSON text, `{\"overlap_seconds\": …}` (`{}`: the default); `None` when the transport found it unusable (and said why in `problems`)." {
        /// The stream's identifier, in any accepted spelling.
        stream_id: String,
    }
}

input! {
    /// The input of changing a log stream, raw.
    UpdateLogStreamParams, body: "The JSON Merge Patch (RFC 7396), as its JSON text; `None` when the transport found the body unusable (and said why in `problems`)." {
        /// The stream's identifier, in any accepted spelling.
        stream_id: String,
    }
}

input! {
    /// The parameters of reading a user, raw.
    GetUserParams {
        /// The user's identifier, in any accepted spelling.
        user_id: String,
    }
}

input! {
    /// The input of changing a user's profile, raw.
    UpdateUserParams, body: "The JSON Merge Patch (RFC 7396), as its JSON text; `None` when the transport found the body unusable (and said why in `problems`)." {
        /// The user's identifier, in any accepted spelling.
        user_id: String,
        /// The precondition: `*` or a list of entity tags, as the `If-Match` header carries it
        /// (the values of several fields joined with commas); `None` when the request has none.
        if_match: Option<String>,
    }
}

input! {
    /// The input of recording accesses, raw.
    RecordParams, body: "The body's JSON text, `{\"entries\": [ … ]}`, read by the service only when the batch's turn to be written has come; `None` when the transport found it unusable (and said why in `problems`)." {
        /// The idempotency key, out of its transport syntax (the REST header's Structured Field
        /// string, a tool's argument); `None` when the request has none.
        idempotency_key: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operation::Operation;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn every_operations_input_struct_has_exactly_its_declared_parameters() {
        for kind in OperationKind::ALL {
            // Every parameter given, as a tool would give it.
            let mut arguments = Map::new();
            for param in kind.spec().params {
                let value = match param.shape {
                    Shape::Text => Value::from("x"),
                    Shape::Integer => Value::from(5),
                    Shape::TextList => Value::from(vec!["a"]),
                    Shape::Boolean => Value::from(true),
                };
                arguments.insert(param.name.into(), value);
            }
            let operation = Operation::parse(kind, Arguments::tool(kind, &arguments).unwrap())
                .unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
            assert_eq!(operation.kind(), kind);
            // And no field the declaration does not name.
            let fields = operation.parameters();
            let mut names: Vec<&str> = fields.as_object().unwrap().keys().map(|k| &**k).collect();
            let mut declared: Vec<&str> = kind.spec().params.iter().map(|p| p.name).collect();
            names.sort_unstable();
            declared.sort_unstable();
            assert_eq!(names, declared, "{kind:?}");
            assert!(
                serde_json::to_string(&fields).unwrap().contains('x') || declared.is_empty(),
                "{kind:?}: the values reach the struct"
            );
        }
    }

    #[test]
    fn tool_arguments_are_typed_by_their_shapes_and_unknown_ones_are_problems() {
        let kind = OperationKind::ListPrivacyAuditLogs;
        let arguments = Arguments::tool(
            kind,
            &object(serde_json::json!({"limit": "5", "ids": ["a"], "cursor": null, "sort": 1})),
        )
        .unwrap();
        let Ok(Operation::ListPrivacyAuditLogs(p)) = Operation::parse(kind, arguments) else {
            panic!("not the list");
        };
        assert_eq!(p.ids, Some(vec!["a".to_owned()]));
        assert_eq!(p.cursor, None, "a null cursor is no cursor");
        assert_eq!(p.limit, None);
        let fields: Vec<_> = p.problems.iter().map(|d| d.get("field")).collect();
        assert_eq!(fields, [Some("limit"), Some("sort")]);
    }

    #[test]
    fn body_members_become_the_body_and_a_missing_path_parameter_is_required() {
        let kind = OperationKind::UpdateUser;
        let arguments =
            Arguments::tool(kind, &object(serde_json::json!({"title": null, "if_match": "*"})))
                .unwrap();
        let Ok(Operation::UpdateUser(p)) = Operation::parse(kind, arguments) else {
            panic!("not the update");
        };
        assert_eq!(p.body.as_deref(), Some(&br#"{"title":null}"#[..]), "null removes");
        assert_eq!(p.if_match.as_deref(), Some("*"));
        assert_eq!(p.problems[0].get("field"), Some("user_id"));
        assert_eq!(p.problems[0].get("reason"), Some("is required"));
    }

    #[test]
    fn query_parameters_are_split_and_repeated_or_unknown_ones_reported_once() {
        let kind = OperationKind::ListPrivacyAuditLogs;
        let mut arguments = Arguments::rest(kind);
        let pairs = [("limit", "1"), ("limit", "2"), ("limit", "3"), ("sort", "a"), ("sort", "b")]
            .into_iter()
            .chain([("ids", "a,b"), ("ids", "")])
            .map(|(k, v)| (k.to_owned(), v.to_owned()));
        arguments.query(pairs);
        let Ok(Operation::ListPrivacyAuditLogs(p)) = Operation::parse(kind, arguments) else {
            panic!("not the list");
        };
        assert_eq!(p.ids, Some(vec!["a".to_owned(), "b".to_owned()]));
        let problems: Vec<_> =
            p.problems.iter().map(|d| (d.get("field"), d.get("reason"))).collect();
        assert_eq!(
            problems,
            [
                (Some("limit"), Some("is given more than once")),
                (Some("sort"), Some("is not a parameter of this operation")),
                (Some("ids"), Some("is given more than once")),
            ]
        );
    }

    #[test]
    fn arguments_past_the_operations_body_limit_are_too_large() {
        let big = "x".repeat(crate::BODY_LIMIT);
        let kind = OperationKind::GetJob;
        let e = Arguments::tool(kind, &object(serde_json::json!({"job_id": big}))).unwrap_err();
        assert_eq!(e.code, recruit_domain::ErrorCode::PayloadTooLarge);
        let record = OperationKind::RecordPrivacyAccesses;
        assert!(Arguments::tool(record, &object(serde_json::json!({"entries": [big]}))).is_ok());
    }
}
