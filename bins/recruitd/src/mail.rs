//! The server's e-mail over SMTP (lettre): the sender the service's [`Mailer`] seam is given
//! when `--smtp-url` is set.

use std::time::Duration;

use lettre::message::{Mailbox, header::ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use recruit_service::mail::{Mail, MailConfig, Mailer, Sending};

use crate::Failure;

/// How long one message may take to hand over, connection included.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// A sender through one SMTP server.
struct Smtp {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Mailer for Smtp {
    fn send(&self, mail: Mail) -> Sending<'_> {
        Box::pin(async move {
            let to = Mailbox::new(
                Some(mail.to_name),
                mail.to.parse().map_err(|e| format!("the address {}: {e}", mail.to))?,
            );
            let message = Message::builder()
                .from(self.from.clone())
                .to(to)
                .subject(mail.subject)
                .header(ContentType::TEXT_PLAIN)
                .body(mail.text)
                .map_err(|e| e.to_string())?;
            match tokio::time::timeout(SEND_TIMEOUT, self.transport.send(message)).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(format!("the mail server refused it: {e}")),
                Err(_) => Err(format!("the mail server did not answer within {SEND_TIMEOUT:?}")),
            }
        })
    }
}

/// The e-mail of a server reached at `base_url`, sent through `url` from `from`; none
/// without a URL.
pub(crate) fn config(
    url: Option<&str>,
    from: &str,
    base_url: &str,
) -> Result<Option<MailConfig>, Failure> {
    let Some(url) = url else { return Ok(None) };
    let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
        .map_err(|e| Failure(format!("--smtp-url: {e}")))?
        .timeout(Some(SEND_TIMEOUT))
        .build();
    let from: Mailbox = from.parse().map_err(|e| Failure(format!("--smtp-from {from:?}: {e}")))?;
    let mailer = std::sync::Arc::new(Smtp { transport, from });
    Ok(Some(MailConfig { mailer, base_url: base_url.to_owned() }))
}
