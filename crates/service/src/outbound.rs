//! Where the server's own requests may go (identity providers, log destinations), and what
//! sends them ([`Fetch`]):
//! never to a loopback, private, link-local, shared, reserved or cloud-metadata address unless
//! the operator allows its block, and never to a metadata address at all. Whoever sends the
//! requests checks every address a name resolves to, and every address written in a URL,
//! against [`Destinations`] before connecting, so a name that resolves elsewhere on the next
//! connection is checked again.
//!
//! The blocks are IANA's special-purpose registries (IPv4 and IPv6) less those that are
//! globally reachable; an IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`) or carried by the
//! NAT64 prefix (`64:ff9b::/96`) is judged as the IPv4 address it is.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
pub use openidconnect::http;

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

const fn v6(s: [u16; 8], len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]), len)
}

/// A request of the server's own failed before it had an answer.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

/// The answer of a request of the server's own.
pub type Fetched = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<http::Response<Vec<u8>>, FetchError>> + Send>,
>;

/// Whether a host may be reached: the policy's reason when not.
pub type Admitted =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), FetchError>> + Send>>;

/// What sends the server's own requests (to identity providers, to log destinations): the
/// server's HTTP client, which follows no redirect and reaches only what [`Destinations`]
/// allows, checked on every connection.
pub trait Fetch: Send + Sync {
    /// Sends `request`.
    fn fetch(&self, request: http::Request<Vec<u8>>) -> Fetched;

    /// Whether `host` (a name, resolved now, or an address) may be reached: what a setting
    /// that names a destination is checked with before it is stored.
    fn admits(&self, host: &str) -> Admitted;

    /// Delivers `frames` (RFC 5425 frames) to the syslog receiver `to` over TLS, and succeeds
    /// only once the receiver has read them all: it closes the connection after reading up to
    /// the server's own close. Reaches only what [`Destinations`] allows.
    fn syslog(&self, to: SyslogTarget, frames: Vec<u8>) -> Admitted;
}

/// A syslog receiver over TLS, as the server connects to it.
#[derive(Clone)]
pub struct SyslogTarget {
    /// Its host name (checked against its certificate) or address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The PEM certificates its certificate must chain to; none: the system's roots.
    pub ca_certificate: Option<String>,
    /// The server's client certificate chain and its private key, both PEM.
    pub client: Option<(String, String)>,
}

impl fmt::Debug for SyslogTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyslogTarget")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("ca_certificate", &self.ca_certificate.is_some())
            .field("client", &self.client.as_ref().map(|_| "<write-only key>"))
            .finish()
    }
}

/// A [`Fetch`], as the service's configuration holds it.
#[derive(Clone)]
pub struct Fetcher(pub Arc<dyn Fetch>);

impl fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fetcher")
    }
}

/// Cloud instance metadata services: refused whatever the operator allows.
const METADATA: [IpAddr; 6] = [
    // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack.
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    // AWS ECS task metadata.
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    // Alibaba Cloud.
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    // Azure WireServer (a public address).
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),
    // AWS IMDS over IPv6.
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    // GCP over IPv6.
    IpAddr::V6(Ipv6Addr::new(0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254)),
];

/// IPv4 blocks that are not globally reachable.
const NOT_GLOBAL_V4: [Ipv4Net; 15] = [
    v4(0, 0, 0, 0, 8),       // "this network": 0.0.0.0 reaches the local host on Linux
    v4(10, 0, 0, 0, 8),      // private
    v4(100, 64, 0, 0, 10),   // shared address space (carrier-grade NAT)
    v4(127, 0, 0, 0, 8),     // loopback
    v4(169, 254, 0, 0, 16),  // link-local
    v4(172, 16, 0, 0, 12),   // private
    v4(192, 0, 0, 0, 24),    // IETF protocol assignments
    v4(192, 0, 2, 0, 24),    // documentation (TEST-NET-1)
    v4(192, 88, 99, 0, 24),  // 6to4 relay anycast, deprecated
    v4(192, 168, 0, 0, 16),  // private
    v4(198, 18, 0, 0, 15),   // benchmarking
    v4(198, 51, 100, 0, 24), // documentation (TEST-NET-2)
    v4(203, 0, 113, 0, 24),  // documentation (TEST-NET-3)
    v4(224, 0, 0, 0, 4),     // multicast
    v4(240, 0, 0, 0, 4),     // reserved, and the broadcast address
];

/// The NAT64 well-known prefix (RFC 6052): judged by the IPv4 address it carries.
const NAT64: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);

/// IPv6 blocks that are not globally reachable.
const NOT_GLOBAL_V6: [Ipv6Net; 11] = [
    v6([0; 8], 8),                            // ::, ::1, IPv4-compatible and other reserved
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), // local-use NAT64
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64),     // discard-only
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32),    // Teredo
    v6([0x2001, 0x2, 0, 0, 0, 0, 0, 0], 48),  // benchmarking
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), // documentation
    v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16),    // 6to4
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),    // documentation (RFC 9637)
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),     // unique local
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 9),     // link-local and the old site-local
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),     // multicast
];

/// Whether `ip` is outside the globally reachable Internet.
fn not_global(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(a) => NOT_GLOBAL_V4.iter().any(|n| n.contains(&a)),
        IpAddr::V6(a) if NAT64.contains(&a) => {
            let [.., a0, a1, a2, a3] = a.octets();
            not_global(IpAddr::V4(Ipv4Addr::new(a0, a1, a2, a3)))
        }
        IpAddr::V6(a) => NOT_GLOBAL_V6.iter().any(|n| n.contains(&a)),
    }
}

/// An address the server does not reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused(pub IpAddr);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if METADATA.contains(&self.0) {
            write!(f, "{} is a cloud metadata address, which this server never reaches", self.0)
        } else {
            write!(
                f,
                "{} is a loopback, private, link-local or reserved address, which this server \
                 reaches only when its operator allows it (--outbound-allow)",
                self.0
            )
        }
    }
}

impl std::error::Error for Refused {}

/// The addresses the server's own requests may reach: every globally reachable one, and those
/// of the blocks the operator allows, metadata services never.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Destinations {
    allowed: Arc<[IpNet]>,
}

impl Destinations {
    /// The policy that also allows `allowed` (an internal identity provider's block, say).
    pub fn new(allowed: Vec<IpNet>) -> Self {
        Self { allowed: allowed.into() }
    }

    /// Whether a connection to `ip` may be made.
    pub fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        let ip = ip.to_canonical();
        let allowed = self.allowed.iter().any(|n| n.contains(&ip));
        if METADATA.contains(&ip) || (!allowed && not_global(ip)) {
            Err(Refused(ip))
        } else {
            Ok(())
        }
    }

    /// Whether a URL's host may be reached, as far as it can be told before resolving it: an
    /// address written as the host (IPv6 in brackets) is checked; a name is left to the
    /// resolver, which checks what it resolves to.
    pub fn check_host(&self, host: &str) -> Result<(), Refused> {
        match host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            Ok(ip) => self.check(ip),
            Err(_) => Ok(()),
        }
    }

    /// Whether every address a name resolved to may be reached: one refused refuses the name,
    /// so that which address a connection picks never matters.
    pub fn check_all(&self, addresses: &[IpAddr]) -> Result<(), Refused> {
        addresses.iter().try_for_each(|ip| self.check(*ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses_outside_the_internet_are_refused_and_public_ones_reached() {
        let policy = Destinations::default();
        for refused in [
            "127.0.0.1",
            "127.255.255.254",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "0.0.0.0",
            "10.1.2.3",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.169.254",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "2001:db8::1",
            "64:ff9b::7f00:1",
            "168.63.129.16",
        ] {
            assert!(policy.check(ip(refused)).is_err(), "{refused} reached");
        }
        for reached in ["172.32.0.1", "100.128.0.1", "8.8.8.8", "64:ff9b::808:808", "2606:4700::1"]
        {
            assert_eq!(policy.check(ip(reached)), Ok(()), "{reached} refused");
        }
    }

    #[test]
    fn an_allowed_block_is_reached_in_either_spelling_but_metadata_never() {
        let policy = Destinations::new(vec!["127.0.0.1/32".parse().unwrap()]);
        assert_eq!(policy.check(ip("127.0.0.1")), Ok(()));
        assert_eq!(policy.check(ip("::ffff:127.0.0.1")), Ok(()));
        assert!(policy.check(ip("127.0.0.2")).is_err());
        let link_local = Destinations::new(vec!["169.254.0.0/16".parse().unwrap()]);
        assert_eq!(link_local.check(ip("169.254.1.1")), Ok(()));
        let refused = link_local.check(ip("169.254.169.254")).unwrap_err();
        assert!(refused.to_string().contains("never reaches"), "{refused}");
    }

    #[test]
    fn hosts_written_as_addresses_are_checked_and_names_left_to_the_resolver() {
        let policy = Destinations::default();
        assert!(policy.check_host("127.0.0.1").is_err());
        assert!(policy.check_host("[::1]").is_err());
        assert_eq!(policy.check_host("login.example.com"), Ok(()));
        let refused = policy.check_all(&[ip("8.8.8.8"), ip("10.0.0.1")]).unwrap_err();
        assert_eq!(refused, Refused(ip("10.0.0.1")));
        assert!(refused.to_string().contains("--outbound-allow"), "{refused}");
    }
}
