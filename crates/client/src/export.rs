//! The privacy ledger's export in the chain's order, proving itself: every line is checked
//! as it arrives ([`ChainPoint::next`]), and the chain must pass through a checkpoint signed
//! by a trusted key with the hash it signed, and end with the lines the server announced.

use std::pin::Pin;

use futures_core::Stream;
use recruit_domain::chain::{ChainPoint, Checkpoint, Digest, ExportLine, Ledger};
use reqwest::Response;

use crate::{Client, Error};

/// A line of an export that continues the chain, and where the chain stands after it.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedLine {
    /// The line as the server sent it.
    pub line: ExportLine,
    /// The chain's position and hash after this line: what a reader keeps to resume.
    pub point: ChainPoint,
}

/// An export of the privacy ledger after a position of its chain.
pub struct Export {
    /// The lines the server announced (`Recruitd-Export-Count`).
    pub count: u64,
    /// The checkpoint the chain must pass through, its signature verified.
    pub checkpoint: Checkpoint,
    /// The lines, each checked as it arrives. The stream ends with an error at the first line
    /// that does not continue the chain, at a cut, at a hash other than the one signed at
    /// the checkpoint's position, or when the chain ends before that position.
    pub lines: Pin<Box<dyn Stream<Item = Result<VerifiedLine, Error>> + Send>>,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export")
            .field("count", &self.count)
            .field("checkpoint", &self.checkpoint)
            .finish_non_exhaustive()
    }
}

/// Where a download being read stands.
struct Reading {
    response: Response,
    buffer: Vec<u8>,
    point: ChainPoint,
    signed: (u64, Digest),
    checkpoint: Checkpoint,
    count: u64,
    received: u64,
    ended: bool,
}

impl Reading {
    fn cut(&self) -> Error {
        Error::Cut { after: self.point.position, expected: self.count, received: self.received }
    }

    /// The next line of the buffer, checked, if a whole one is there.
    fn next_line(&mut self) -> Result<Option<VerifiedLine>, Error> {
        let Some(end) = self.buffer.iter().position(|b| *b == b'\n') else { return Ok(None) };
        let raw: Vec<u8> = self.buffer.drain(..=end).collect();
        let line: ExportLine = serde_json::from_slice(&raw[..end]).map_err(|e| {
            Error::Decode(format!("the line after position {}: {e}", self.point.position))
        })?;
        let point = self.point.next(Ledger::Privacy, self.checkpoint.organization_id, &line)?;
        if point.position == self.signed.0 && point.hash != self.signed.1 {
            return Err(Error::Checkpoint {
                position: point.position,
                why: "the entry's hash is not the one signed".into(),
            });
        }
        self.point = point;
        self.received += 1;
        Ok(Some(VerifiedLine { line, point }))
    }

    /// What the end of the download proves: every line announced, and the checkpoint
    /// reached.
    fn finish(&self) -> Result<(), Error> {
        if !self.buffer.is_empty() || self.received != self.count {
            return Err(self.cut());
        }
        if self.point.position < self.signed.0 {
            return Err(Error::Checkpoint {
                position: self.signed.0,
                why: format!("the chain ends before it, at position {}", self.point.position),
            });
        }
        Ok(())
    }
}

impl Client {
    /// `GET /v1/audit-logs/privacy/export` after `from` (a position of the organization's
    /// chain and its hash; [`ChainPoint::START`] for the whole chain), in the chain's order,
    /// checked line by line.
    ///
    /// First the latest checkpoint is fetched and its signature verified
    /// ([`Client::trusted_checkpoint`]); the export must then reach its position with the
    /// hash it signs. The export selects by the chain alone (`after_position`, no window of
    /// access times), so an entry recorded late or stamped ahead by a source's clock is read
    /// in its place.
    pub async fn export(&self, from: ChainPoint) -> Result<Export, Error> {
        let (checkpoint, hash) = self.trusted_checkpoint().await?;
        if checkpoint.position < from.position
            || (checkpoint.position == from.position && hash != from.hash)
        {
            return Err(Error::Checkpoint {
                position: checkpoint.position,
                why: format!(
                    "it does not match the chain read up to position {} before",
                    from.position
                ),
            });
        }
        let query = [("after_position", from.position.to_string())];
        let url = self.url(crate::endpoint::EXPORT_PRIVACY_AUDIT_LOGS, &[], &query)?;
        let response = self.send(|| self.http.get(url.clone())).await?;
        let count = crate::header(response.headers(), "recruitd-export-count")
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| Error::Decode("the export announces no line count".into()))?;
        let reading = Reading {
            response,
            buffer: vec![],
            point: from,
            signed: (checkpoint.position, hash),
            checkpoint: checkpoint.clone(),
            count,
            received: 0,
            ended: false,
        };
        let lines = futures_util::stream::try_unfold(reading, |mut r| async move {
            loop {
                if let Some(line) = r.next_line()? {
                    return Ok(Some((line, r)));
                }
                if r.ended {
                    r.finish()?;
                    return Ok(None);
                }
                match r.response.chunk().await {
                    Ok(Some(bytes)) => r.buffer.extend_from_slice(&bytes),
                    Ok(None) => r.ended = true,
                    Err(_) => return Err(r.cut()),
                }
            }
        });
        Ok(Export { count, checkpoint, lines: Box::pin(lines) })
    }
}
