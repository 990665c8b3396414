//! `recruitd log-stream`: the operations of `/v1/log-streams`, run by the service as one of
//! the organization's owners, and their answers printed for the operator.

use std::io::Read;
use std::path::Path;

use recruit_domain::model::LogStream;
use recruit_domain::{LogStreamId, Scope};
use recruit_service::input::Arguments;
use recruit_service::{
    Caller, Identity, Operation, OperationKind, Outcome, RequestContext, Service,
};

use crate::Failure;
use crate::cli::{Acting, LogStreamCommand};
use crate::output::{print, print_json, problem};

/// Runs `command` on `service`.
pub(crate) async fn log_stream(
    service: &Service,
    command: LogStreamCommand,
) -> Result<(), Failure> {
    use LogStreamCommand as C;
    use OperationKind as K;
    let (kind, id, body, acting) = match command {
        C::List { acting } => (K::ListLogStreams, None, None, acting),
        C::Show { id, acting } => (K::GetLogStream, Some(id), None, acting),
        C::Create { settings, acting } => {
            (K::CreateLogStream, None, Some(read_json(&settings)?), acting)
        }
        C::Update { id, patch, acting } => {
            (K::UpdateLogStream, Some(id), Some(read_json(&patch)?), acting)
        }
        C::Pause { id, acting } => (K::PauseLogStream, Some(id), None, acting),
        C::Resume { id, acting } => (K::ResumeLogStream, Some(id), None, acting),
        C::Delete { id, acting } => (K::DeleteLogStream, Some(id), None, acting),
        C::RotateSecret { id, overlap, acting } => {
            let body = overlap.map(|o| serde_json::json!({"overlap_seconds": o.as_secs()}));
            let body = body.unwrap_or_else(|| serde_json::json!({}));
            (K::RotateLogStreamSecret, Some(id), Some(body.to_string().into_bytes()), acting)
        }
    };
    let caller = operator(service, &acting).await?;
    match run(service, caller, kind, id, body).await? {
        Outcome::LogStreams(page) if acting.json => {
            page.data.iter().try_for_each(print_json)?;
        }
        Outcome::LogStreams(page) => page.data.iter().for_each(|s| print(&line(s))),
        Outcome::LogStream(stream) if acting.json => print_json(&stream)?,
        Outcome::LogStream(stream) => {
            print(&line(&stream));
            if let Some(error) = &stream.last_error {
                print(&format!("  last error at {}: {}", error.at, error.message));
            }
            if let Some(secret) = &stream.signing_secret {
                print("Its signing secret is shown once; store it now:");
                print(&format!("  {secret}"));
            }
        }
        Outcome::Removed => print(&format!("Log stream {} removed.", id.expect("a stream"))),
        _ => return Err(Failure("the service answered with something unexpected".into())),
    }
    Ok(())
}

/// The operator acting as `acting`'s user, with the scope the streams need.
async fn operator(service: &Service, acting: &Acting) -> Result<Caller, Failure> {
    let user = acting.user;
    recruit_service::auth::operator(service.store().as_ref(), user, vec![Scope::LogStreamsAdmin])
        .await
        .map_err(|e| Failure(format!("{user}: {}", problem(&e))))
}

/// Runs the operation `kind` on the stream `id` with `body`, as the REST API would.
async fn run(
    service: &Service,
    caller: Caller,
    kind: OperationKind,
    id: Option<LogStreamId>,
    body: Option<Vec<u8>>,
) -> Result<Outcome, Failure> {
    let path: Vec<_> = id.map(|id| ("streamId", id.to_string())).into_iter().collect();
    let arguments = Arguments::rest_call(kind, &path, body);
    let request_id = format!("cli-{}", recruit_domain::Uuid::now_v7());
    let context = RequestContext::rest(request_id, None);
    let failed = |e: recruit_service::ServiceError| Failure(problem(&e));
    let operation = Operation::parse(kind, arguments).map_err(failed)?;
    let identity = Identity::Authenticated(Box::new(caller));
    Ok(service.execute(identity, &context, operation).await.map_err(failed)?.outcome)
}

/// The bytes of the JSON file at `path`, or of standard input for `-`.
fn read_json(path: &Path) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    let read = if path == Path::new("-") {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|read| bytes = read)
    };
    read.map_err(|e| Failure(format!("{}: {e}", path.display())))?;
    Ok(bytes)
}

/// One line for a stream: id, state, destination, name, and how far its delivery is.
fn line(stream: &LogStream) -> String {
    let (kind, address) = stream.destination.endpoint();
    let delivered = stream.delivered_at.map_or_else(|| "never".to_owned(), |t| t.to_string());
    format!(
        "{}  {}  {kind} {address}  {:?}  delivered up to {} ({delivered})  {} behind",
        stream.id,
        stream.state.as_str(),
        stream.name,
        stream.delivered_position,
        stream.lag_entries,
    )
}
