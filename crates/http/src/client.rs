//! Who the client is: the TCP peer, or, when the peer is a proxy the operator trusts, the
//! address that proxy forwarded in `X-Forwarded-For`. The audit ledgers record it and failed
//! authentications are counted against it, so it must not be something a client can choose.

use std::net::{IpAddr, SocketAddr};

use hyper::HeaderMap;
use ipnet::IpNet;

/// The client's address. Without trusted proxies, or when the peer is not one, it is the peer.
/// Otherwise `X-Forwarded-For` (every such field, in order) is read from the right, each
/// element added by the hop before it: the first address that is not a trusted proxy is the
/// client. Elements left of it were written by the client and are ignored. An element that is
/// not an address ends the walk at the proxy that wrote it; when every element is trusted, the
/// leftmost is the client.
pub(crate) fn client_address(
    peer: Option<IpAddr>,
    headers: &HeaderMap,
    trusted: &[IpNet],
) -> Option<IpAddr> {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(&ip.to_canonical()));
    let mut client = peer?;
    if !is_trusted(&client) {
        return Some(client);
    }
    let mut forwarded: Vec<&str> = vec![];
    for value in headers.get_all("x-forwarded-for") {
        let Ok(value) = value.to_str() else { return Some(client) };
        forwarded.extend(value.split(',').map(str::trim).filter(|e| !e.is_empty()));
    }
    for element in forwarded.iter().rev() {
        let Some(ip) = address(element) else { break };
        client = ip;
        if !is_trusted(&ip) {
            break;
        }
    }
    Some(client)
}

/// An element of `X-Forwarded-For`: an address, possibly with a port (`192.0.2.1:4711`,
/// `[2001:db8::1]:4711`), as some proxies write it.
fn address(element: &str) -> Option<IpAddr> {
    element
        .parse::<IpAddr>()
        .ok()
        .or_else(|| element.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append("x-forwarded-for", v.parse().unwrap());
        }
        map
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn the_peer_is_the_client_unless_it_is_a_trusted_proxy() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let spoofed = headers(&["198.51.100.7"]);
        assert_eq!(client_address(ip("203.0.113.1"), &spoofed, &trusted), ip("203.0.113.1"));
        assert_eq!(client_address(ip("10.1.2.3"), &spoofed, &[]), ip("10.1.2.3"));
        assert_eq!(client_address(ip("10.1.2.3"), &spoofed, &trusted), ip("198.51.100.7"));
        assert_eq!(client_address(None, &spoofed, &trusted), None);
    }

    #[test]
    fn the_walk_stops_at_the_first_untrusted_address_from_the_right() {
        let trusted: Vec<IpNet> =
            vec!["10.0.0.0/8".parse().unwrap(), "2001:db8:ffff::/48".parse().unwrap()];
        let peer = ip("10.0.0.1");
        // What the client wrote itself (left of the first untrusted address) is ignored.
        let chain = headers(&["6.6.6.6, 198.51.100.7", "10.9.9.9"]);
        assert_eq!(client_address(peer, &chain, &trusted), ip("198.51.100.7"));
        // Ports and brackets, IPv4-mapped IPv6, IPv6 proxies.
        let chain = headers(&["[2001:db8::5]:4711, 2001:db8:ffff::1, ::ffff:10.2.2.2"]);
        assert_eq!(client_address(peer, &chain, &trusted), ip("2001:db8::5"));
        let chain = headers(&["192.0.2.9:80"]);
        assert_eq!(client_address(peer, &chain, &trusted), ip("192.0.2.9"));
        // Every hop trusted: the leftmost is the client. No header: the proxy itself.
        let chain = headers(&["10.3.3.3, 10.4.4.4"]);
        assert_eq!(client_address(peer, &chain, &trusted), ip("10.3.3.3"));
        assert_eq!(client_address(peer, &HeaderMap::new(), &trusted), peer);
        // Garbage ends the walk at the proxy that forwarded it.
        let chain = headers(&["198.51.100.7, unknown, 10.5.5.5"]);
        assert_eq!(client_address(peer, &chain, &trusted), ip("10.5.5.5"));
    }
}
