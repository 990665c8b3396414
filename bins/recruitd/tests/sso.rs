//! Single sign-on to the console through a real OpenID provider (`oidc-provider`, the npm
//! package, in `crates/console/oidc-provider`, started here): configured with the CLI, the
//! code flow driven as a browser would (its cookies kept, redirects followed by hand), the
//! overview reached; and each forgery the provider is told to make, a replayed callback, a
//! foreign state, a user who is not an owner and one who is no user refused with their page.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use recruit_client::ErrorCode;
use recruit_domain::model::{Role, SingleSignOnSettings};
use recruit_ports::testkit::{ORG_A, world, world_user};
use serde_json::{Value, json};

use crate::common::*;

/// The test provider's folder.
fn provider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/console/oidc-provider")
}

/// The provider, stopped when dropped.
struct Provider {
    child: Child,
    issuer: String,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    /// Starts the provider for the client whose redirect URI is `redirect`, with `accounts`;
    /// installs its packages first when they are missing (`npm ci`, from the lock file).
    fn start(redirect: &str, accounts: &Value) -> Self {
        let dir = provider_dir();
        if !dir.join("node_modules").exists() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir)
                .status()
                .expect("npm runs: Node.js and npm are needed by this test");
            assert!(status.success(), "npm ci in {}", dir.display());
        }
        let mut child = Command::new("node")
            .arg("server.mjs")
            .current_dir(&dir)
            .env("OP_PORT", "0")
            .env("OP_REDIRECT_URIS", redirect)
            .env("OP_ACCOUNTS", accounts.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs: Node.js is needed by this test");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let issuer =
            line.trim().strip_prefix("OP listening on ").expect("the ready line").to_owned();
        Self { child, issuer }
    }

    /// A control request to the provider (`/__test/…`).
    async fn control(&self, path: &str, body: Value) {
        let url = format!("{}/__test/{path}", self.issuer);
        let answer = http_client(true).post(url).json(&body).send().await.unwrap();
        assert!(answer.status().is_success(), "{path}: {}", answer.status());
    }
}

/// A browser: cookies kept per host, redirects followed by hand.
struct Browser {
    http: reqwest::Client,
    cookies: Vec<(String, String, String)>,
}

impl Browser {
    fn new() -> Self {
        Self { http: http_client(false), cookies: vec![] }
    }

    fn cookie_header(&self, host: &str) -> String {
        let pairs: Vec<String> = self
            .cookies
            .iter()
            .filter(|(h, _, _)| h == host)
            .map(|(_, n, v)| format!("{n}={v}"))
            .collect();
        pairs.join("; ")
    }

    /// One request; keeps the cookies it sets; returns the status, `Location` and body.
    async fn send(
        &mut self,
        method: &str,
        url: &str,
        form: Option<&str>,
        origin: Option<&str>,
    ) -> (u16, String, String) {
        let parsed = reqwest::Url::parse(url).unwrap();
        let host = format!("{}:{}", parsed.host_str().unwrap(), parsed.port().unwrap_or(80));
        let mut request = self.http.request(method.parse().unwrap(), url);
        let cookies = self.cookie_header(&host);
        if !cookies.is_empty() {
            request = request.header("cookie", cookies);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(form) = form {
            request = request
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form.to_owned());
        }
        let response = request.send().await.unwrap();
        for value in response.headers().get_all("set-cookie") {
            let value = value.to_str().unwrap();
            let (pair, attributes) = value.split_once(';').unwrap_or((value, ""));
            let (name, cookie) = pair.split_once('=').unwrap();
            self.cookies.retain(|(h, n, _)| !(h == &host && n == name));
            if !attributes.to_ascii_lowercase().contains("max-age=0") && !cookie.is_empty() {
                self.cookies.push((host.clone(), name.to_owned(), cookie.to_owned()));
            }
        }
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .map(|l| parsed.join(l.to_str().unwrap()).unwrap().to_string())
            .unwrap_or_default();
        (status, location, response.text().await.unwrap())
    }

    /// Starts a single sign-on for `email` on `base` and follows it to recruitd's callback;
    /// returns the callback's URL and its answer (status and body).
    async fn sign_in(&mut self, base: &str, email: &str) -> (String, u16, String) {
        let form = format!("email={}", email.replace('@', "%40"));
        let start = format!("{base}/console/sign-in/sso");
        let (status, _, body) = self.send("POST", &start, Some(&form), Some(base)).await;
        assert_eq!(status, 200, "{body}");
        let mut location = leaving_for(&body);
        for _ in 0..10 {
            if location.starts_with(base) {
                let (status, _, body) = self.send("GET", &location, None, None).await;
                return (location, status, body);
            }
            let (status, next, body) = self.send("GET", &location, None, None).await;
            assert_eq!(status, 303, "at the provider, {location}: {body}");
            location = next;
        }
        panic!("the provider never sent the browser back");
    }
}

/// Where the page a sign-in leaves from sends the browser: its `<meta http-equiv="refresh">`
/// (a form's submission may not be redirected off the site), and its link says the same.
fn leaving_for(page: &str) -> String {
    let unescape = |s: &str| s.replace("&#38;", "&").replace("&amp;", "&");
    let refresh = page.split("url=").nth(1).and_then(|s| s.split('"').next());
    let refresh = unescape(refresh.expect("a refresh to the provider"));
    let main = page.split("<main").nth(1).unwrap_or_default();
    let link = main.split("<a href=\"").nth(1).and_then(|s| s.split('"').next()).map(unescape);
    assert_eq!(link.as_deref(), Some(refresh.as_str()), "the link goes where the refresh does");
    refresh
}

/// reqwest is built without a crypto provider: ring's, as the server installs it.
fn http_client(redirects: bool) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let policy = if redirects {
        reqwest::redirect::Policy::default()
    } else {
        reqwest::redirect::Policy::none()
    };
    reqwest::Client::builder().redirect(policy).build().unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_opens_through_the_identity_provider_and_refuses_every_forgery() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("recruitd.db").display());
    let document = dir.path().join("world.json");
    std::fs::write(&document, serde_json::to_string(&world()).unwrap()).unwrap();
    cli(&url, &["import", document.to_str().unwrap()]);
    let (owner, member) = (world_user(ORG_A, Role::Owner), world_user(ORG_A, Role::Member));
    let admin = world_user(ORG_A, Role::Admin);

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    // The provider's accounts by the `login_hint` recruitd sends, the address given to start
    // the sign-in; the admin's account there names someone recruitd does not know.
    let accounts = json!({
        owner.email.clone(): {"email": owner.email, "email_verified": true, "groups": ["privacy"]},
        member.email.clone(): {"email": member.email, "email_verified": true, "groups": ["privacy"]},
        admin.email.clone(): {"email": "stranger@elsewhere.example", "email_verified": true},
    });
    let provider = Provider::start(&format!("{base}/console/sso/callback"), &accounts);
    let secret = dir.path().join("client-secret");
    std::fs::write(&secret, "recruitd-secret\n").unwrap();
    let org = org_id(ORG_A).to_string();

    // A provider on a loopback address is refused unless the operator allows its block, and
    // one that does not answer its discovery is refused when configured.
    let set_at = |issuer: &str, allow: &[&str]| {
        let output = Command::new(BIN)
            .args(["--database-url", &url, "console", "sso-set", "--org", &org])
            .args(["--issuer", issuer, "--client-id", "recruitd"])
            .args(["--client-secret-file", secret.to_str().unwrap()])
            .args(allow)
            .output()
            .unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (done, said) = set_at(&provider.issuer, &[]);
    assert!(!done && said.contains("--outbound-allow"), "{said}");
    let (done, said) = set_at(&provider.issuer, &["--outbound-allow", "10.0.0.0/8"]);
    assert!(!done && said.contains("127.0.0.1 is a loopback"), "{said}");
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    let (done, said) = set_at(&nowhere, &["--outbound-allow", "127.0.0.1"]);
    assert!(!done && said.contains("could not be discovered"), "{said}");
    let issuer = provider.issuer.clone();
    // The provider's settings, with `more` flags.
    let set = |more: &[&str]| {
        let secret = secret.to_str().unwrap();
        let mut args = vec!["--outbound-allow", "127.0.0.1", "console", "sso-set", "--org", &org];
        args.extend(["--issuer", &issuer]);
        args.extend(["--client-id", "recruitd", "--client-secret-file", secret]);
        args.extend(more);
        cli(&url, &args);
    };
    set(&["--owner-group", "privacy"]);
    let shown: Value =
        serde_json::from_str(&cli(&url, &["console", "sso-show", "--org", &org])).unwrap();
    assert_eq!(shown["issuer"], issuer.as_str());
    assert!(!shown.to_string().contains("recruitd-secret"), "the secret is never shown");

    let public = ["--public-base-url", base.as_str(), "--outbound-allow", "127.0.0.1"];
    let server = Server::spawn_at(port, &url, &public, "warn", Stdio::inherit());

    // The owner signs in and lands on the overview.
    let mut browser = Browser::new();
    let (callback, status, body) = browser.sign_in(&base, &owner.email).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, page) =
        browser.send("GET", &format!("{base}/console/overview"), None, None).await;
    assert_eq!(status, 200, "the session opens the overview: {page}");
    let api = cli(&url, &["audit", "list", "--ledger", "api", "--org", &org, "--json"]);
    let sign_in = api.lines().find(|l| l.contains("consoleSignIn")).expect("the sign-in recorded");
    assert!(sign_in.contains("SINGLE_SIGN_ON"), "{sign_in}");
    // The same callback again: its code is spent and the sign-in in flight gone.
    let (status, _, _) = browser.send("GET", &callback, None, None).await;
    assert_eq!(status, 400, "a replayed callback");

    // Each forgery of the ID token is refused with the page that says so.
    for mode in [
        "alg-none",
        "wrong-nonce",
        "expired",
        "wrong-audience",
        "wrong-issuer",
        "unknown-key",
        "bad-signature",
        "hs256",
    ] {
        provider.control("tamper", json!({"mode": mode})).await;
        let (_, status, body) = Browser::new().sign_in(&base, &owner.email).await;
        assert_eq!(status, 401, "{mode}: {body}");
        assert!(body.contains("could not be verified"), "{mode}: {body}");
    }
    // Keys rotated at the provider: fetched again, and the sign-in goes through.
    provider.control("rotate-keys", json!({})).await;
    let (_, status, body) = Browser::new().sign_in(&base, &owner.email).await;
    assert_eq!(status, 200, "after the provider's keys changed: {body}");

    // A member of the organization, and someone who is no user: each told why.
    let (_, status, body) = Browser::new().sign_in(&base, &member.email).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("only active owners"), "{body}");
    let (_, status, body) = Browser::new().sign_in(&base, &admin.email).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("not a user of this organization"), "{body}");

    // A callback with another browser's state, or none started in this one.
    let mut other = Browser::new();
    let (callback, _, _) = {
        provider.control("tamper", json!({"mode": "none"})).await;
        let form = format!("email={}", owner.email.replace('@', "%40"));
        let (_, _, page) = other
            .send("POST", &format!("{base}/console/sign-in/sso"), Some(&form), Some(&base))
            .await;
        (leaving_for(&page), 0, String::new())
    };
    let forged = format!("{base}/console/sso/callback?code=x&state=not-the-state");
    let (status, _, body) = other.send("GET", &forged, None, None).await;
    assert_eq!(status, 400, "{body}");
    assert!(callback.starts_with(&provider.issuer));
    let (status, _, _) = Browser::new().send("GET", &forged, None, None).await;
    assert_eq!(status, 400, "no sign-in started in this browser");

    // Break glass off: a pasted owner's token no longer opens the console.
    set(&["--tokens-and-links", "off"]);
    let pasted_token = token(&url, ORG_A, Role::Owner, "audit_logs:read");
    let mut pasted = Browser::new();
    let form = format!("token={pasted_token}");
    let (status, _, body) =
        pasted.send("POST", &format!("{base}/console/sign-in"), Some(&form), Some(&base)).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("identity provider only"), "{body}");
    let started = Instant::now();
    let (_, status, _) = Browser::new().sign_in(&base, &owner.email).await;
    assert_eq!(status, 200, "single sign-on still opens it");
    assert!(started.elapsed() < Duration::from_secs(10));

    // Through the API: shown without the secret; set again without it (the same provider and
    // client: the secret kept, so the sign-in still exchanges its code); then removed.
    let admin = token(&url, ORG_A, Role::Owner, "organization:admin");
    let api = recruit_client::Client::builder(base.as_str(), admin).build().unwrap();
    let shown = api.single_sign_on().await.unwrap();
    assert_eq!((shown.issuer.as_str(), shown.tokens_and_links), (issuer.as_str(), false));
    assert_eq!(shown.redirect_path, "/console/sso/callback");
    let settings = SingleSignOnSettings {
        issuer: issuer.clone(),
        client_id: "recruitd".into(),
        client_secret: None,
        user_claim: "email".into(),
        owner_groups: vec![],
        tokens_and_links: true,
    };
    let set = api.set_single_sign_on(&settings).await.unwrap();
    assert!(set.tokens_and_links && set.owner_groups.is_empty(), "{set:?}");
    let (_, status, body) = Browser::new().sign_in(&base, &owner.email).await;
    assert_eq!(status, 200, "the secret kept still exchanges the code: {body}");
    let (status, _, body) =
        pasted.send("POST", &format!("{base}/console/sign-in"), Some(&form), Some(&base)).await;
    assert_ne!(status, 403, "break glass open again: {body}");
    let another = SingleSignOnSettings { client_id: "another".into(), ..settings.clone() };
    let refused = api.set_single_sign_on(&another).await.unwrap_err();
    assert_eq!(refused.code(), Some(&ErrorCode::ValidationFailed));
    assert!(refused.to_string().contains("client_secret"), "{refused}");
    let metadata = SingleSignOnSettings {
        issuer: "https://169.254.169.254".into(),
        client_secret: Some("s3cr3t".into()),
        ..settings
    };
    let refused = api.set_single_sign_on(&metadata).await.unwrap_err();
    assert!(refused.to_string().contains("never reaches"), "{refused}");
    api.remove_single_sign_on().await.unwrap();
    let gone = api.single_sign_on().await.unwrap_err();
    assert_eq!(gone.code(), Some(&ErrorCode::NotFound), "{gone}");
    server.stop();
}
