//! `recruitd log-stream`: its subcommands and their arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use recruit_domain::{LogStreamId, UserId};

use super::ServiceArgs;

/// `recruitd log-stream`: what to do, as whom, and the settings the operations need.
#[derive(Debug, clap::Args)]
pub(crate) struct LogStreamArgs {
    #[command(subcommand)]
    pub(crate) command: LogStreamCommand,
    #[command(flatten)]
    pub(crate) service: ServiceArgs,
}

/// Who acts on the streams, and how the answer is printed.
#[derive(Debug, clap::Args)]
pub(crate) struct Acting {
    /// The owner acting (`usr_…`): the streams are their organization's.
    #[arg(long)]
    pub(crate) user: UserId,
    /// Print the API's JSON, one object per line (NDJSON).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum LogStreamCommand {
    /// List the organization's streams: state, position delivered, lag and last error.
    List {
        #[command(flatten)]
        acting: Acting,
    },
    /// Show one stream.
    Show {
        /// The stream (`lst_…`).
        id: LogStreamId,
        #[command(flatten)]
        acting: Acting,
    },
    /// Make a stream from its settings, as `POST /v1/log-streams` takes them (a JSON object:
    /// `name`, `destination`, and `after_position` or `after_time` to start before now). An
    /// HTTPS stream's signing secret is printed once.
    Create {
        /// The settings: a JSON file, or `-` for standard input.
        #[arg(long, value_name = "FILE")]
        settings: PathBuf,
        #[command(flatten)]
        acting: Acting,
    },
    /// Change a stream's name or destination with a JSON merge patch, as
    /// `PATCH /v1/log-streams/{id}` takes it.
    Update {
        /// The stream (`lst_…`).
        id: LogStreamId,
        /// The merge patch: a JSON file, or `-` for standard input.
        #[arg(long, value_name = "FILE")]
        patch: PathBuf,
        #[command(flatten)]
        acting: Acting,
    },
    /// Pause a stream; it keeps its position.
    Pause {
        /// The stream (`lst_…`).
        id: LogStreamId,
        #[command(flatten)]
        acting: Acting,
    },
    /// Resume a paused, failing or suspended stream from the position it holds.
    Resume {
        /// The stream (`lst_…`).
        id: LogStreamId,
        #[command(flatten)]
        acting: Acting,
    },
    /// Remove a stream.
    Delete {
        /// The stream (`lst_…`).
        id: LogStreamId,
        #[command(flatten)]
        acting: Acting,
    },
    /// Replace an HTTPS stream's signing secret, printed once; batches are signed with both
    /// secrets for `--overlap`.
    RotateSecret {
        /// The stream (`lst_…`).
        id: LogStreamId,
        /// How long the previous secret still signs, such as `1d` (at most 7 days).
        #[arg(long, value_parser = humantime::parse_duration)]
        overlap: Option<Duration>,
        #[command(flatten)]
        acting: Acting,
    },
}
