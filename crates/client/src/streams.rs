//! The organization's log streams through the API, and a receiver's check of what a stream
//! delivered.

use reqwest::Method;

use crate::{Client, Error, ExportLine, JSON, ReceivedChain, endpoint, json};
use recruit_domain::LogStreamId;
use recruit_domain::model::{LogStream, LogStreamSettings, Page};

impl Client {
    /// `GET /v1/log-streams`: the organization's log streams, oldest first.
    pub async fn log_streams(&self) -> Result<Vec<LogStream>, Error> {
        let page: Page<LogStream> =
            self.get(self.url(endpoint::LIST_LOG_STREAMS, &[], &[])?).await?;
        Ok(page.data)
    }

    /// `POST /v1/log-streams`: makes a log stream; the answer holds its signing secret, which
    /// no other answer shows. Retried only when the server certainly did not take the request
    /// (a retry after an answer lost on the way could make a second stream).
    pub async fn create_log_stream(
        &self,
        settings: &LogStreamSettings,
    ) -> Result<LogStream, Error> {
        let url = self.url(endpoint::CREATE_LOG_STREAM, &[], &[])?;
        let body = serde_json::to_vec(settings)
            .map_err(|e| Error::Request(format!("the settings cannot be sent as JSON: {e}")))?;
        let request = || {
            let request = self.http.post(url.clone()).timeout(self.timeout);
            request.header("content-type", JSON).body(body.clone())
        };
        json(self.send_retried(request, true).await?).await
    }

    /// `GET /v1/log-streams/{streamId}`: one log stream, with how its delivery goes.
    pub async fn log_stream(&self, id: LogStreamId) -> Result<LogStream, Error> {
        self.get(self.url(endpoint::GET_LOG_STREAM, &[id.to_string()], &[])?).await
    }

    /// `PATCH /v1/log-streams/{streamId}`: changes its name or destination by the JSON Merge
    /// Patch `patch`. Safe to retry: the same patch again changes nothing more.
    pub async fn update_log_stream(
        &self,
        id: LogStreamId,
        patch: &serde_json::Value,
    ) -> Result<LogStream, Error> {
        let url = self.url(endpoint::UPDATE_LOG_STREAM, &[id.to_string()], &[])?;
        let body = serde_json::to_vec(patch)
            .map_err(|e| Error::Request(format!("the patch cannot be sent as JSON: {e}")))?;
        let merge_patch = "application/merge-patch+json";
        Ok(self.send_body(Method::PATCH, url, merge_patch, body, None).await?.0)
    }

    /// `POST /v1/log-streams/{streamId}/pause`: pauses it, keeping its position. Safe to
    /// retry.
    pub async fn pause_log_stream(&self, id: LogStreamId) -> Result<LogStream, Error> {
        let url = self.url(endpoint::PAUSE_LOG_STREAM, &[id.to_string()], &[])?;
        Ok(self.send_body(Method::POST, url, JSON, Vec::new(), None).await?.0)
    }

    /// `POST /v1/log-streams/{streamId}/resume`: resumes it from its position. Safe to retry.
    pub async fn resume_log_stream(&self, id: LogStreamId) -> Result<LogStream, Error> {
        let url = self.url(endpoint::RESUME_LOG_STREAM, &[id.to_string()], &[])?;
        Ok(self.send_body(Method::POST, url, JSON, Vec::new(), None).await?.0)
    }

    /// `POST /v1/log-streams/{streamId}/rotate-secret`: a new signing secret, in this answer
    /// only; the one it replaces signs beside it for `overlap` (the server's default, 24 hours,
    /// when none). Retried only when the server certainly did not take the request: a second
    /// rotation would end the first one's overlap.
    pub async fn rotate_log_stream_secret(
        &self,
        id: LogStreamId,
        overlap: Option<std::time::Duration>,
    ) -> Result<LogStream, Error> {
        let url = self.url(endpoint::ROTATE_LOG_STREAM_SECRET, &[id.to_string()], &[])?;
        let body = match overlap {
            Some(d) => serde_json::json!({"overlap_seconds": d.as_secs()}),
            None => serde_json::json!({}),
        };
        let body = body.to_string().into_bytes();
        let request = || {
            let request = self.http.post(url.clone()).timeout(self.timeout);
            request.header("content-type", JSON).body(body.clone())
        };
        json(self.send_retried(request, true).await?).await
    }

    /// `DELETE /v1/log-streams/{streamId}`: removes it. A retry after a removal that
    /// succeeded unseen is [`ErrorCode::NotFound`](crate::ErrorCode::NotFound).
    pub async fn delete_log_stream(&self, id: LogStreamId) -> Result<(), Error> {
        let url = self.url(endpoint::DELETE_LOG_STREAM, &[id.to_string()], &[])?;
        self.send(|| self.http.delete(url.clone()).timeout(self.timeout)).await.map(drop)
    }

    /// What a receiver of a log stream stored (its export lines as delivered, in any order,
    /// with duplicates), checked chain by chain against the latest checkpoint, trusted as
    /// [`Client::trusted_checkpoint`] trusts it: per chain, the positions missing (from after
    /// `from`, the stream's start, or from its first line), the duplicates, and every line that
    /// does not prove itself. Lines of another organization's chains are checked without a
    /// checkpoint.
    ///
    /// ```no_run
    /// # async fn run(client: recruit_client::Client, stored: Vec<recruit_client::ExportLine>)
    /// # -> Result<(), recruit_client::Error> {
    /// for chain in client.verify_received(stored, Some(0)).await? {
    ///     if !chain.is_complete() {
    ///         println!("{} is missing or altered: {:?}", chain.organization_id, chain.problems);
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn verify_received(
        &self,
        lines: impl IntoIterator<Item = ExportLine>,
        from: Option<u64>,
    ) -> Result<Vec<ReceivedChain>, Error> {
        let (checkpoint, _) = self.trusted_checkpoint().await?;
        let numbered = lines.into_iter().enumerate().map(|(n, line)| (n + 1, line));
        let (chains, unchained) =
            recruit_domain::chain::check_received(numbered, &[checkpoint], from);
        if let Some(recruit_domain::chain::Problem::Unchained { line }) = unchained.first() {
            return Err(Error::Decode(format!("line {line} is not an export line of a chain")));
        }
        Ok(chains)
    }
}
