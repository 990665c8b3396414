//! SCIM 2.0 at `/scim/v2`: the request bodies Okta and Microsoft Entra ID document, replayed
//! as they send them; deprovisioning ending every credential of the user; SCIM's own error
//! messages; and what a SCIM source writes refused by the API as sync-managed.

use http_body_util::Full;
use hyper::StatusCode;
use recruit_domain::Scope;
use recruit_domain::model::Role;
use recruit_ports::testkit::{ORG_A, ORG_B, user_id};
use recruit_ports::{Directory, Ledgers};
use serde_json::{Value, json};

use crate::common::Fixture;

const ERROR: &str = "urn:ietf:params:scim:api:messages:2.0:Error";

fn org(n: u128) -> recruit_domain::OrganizationId {
    recruit_domain::OrganizationId::from_uuid(recruit_domain::Uuid::from_u128(n))
}

/// The fixture and a SCIM token of `org`'s owner.
async fn scim(org: u128) -> (Fixture, String) {
    let f = Fixture::with(|_| {}).await;
    let owner = user_id(org, Role::Owner);
    let (_, secret) =
        recruit_service::auth::create_scim_token(&*f.store, owner, "idp".into(), None)
            .await
            .unwrap();
    (f, secret)
}

async fn call(
    f: &Fixture,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, hyper::Response<recruit_http::Body>, Value) {
    let mut request = hyper::Request::builder().method(method).uri(format!("/scim/v2{path}"));
    if let Some(t) = token {
        request = request.header("authorization", format!("Bearer {t}"));
    }
    let bytes = match body {
        Some(b) => {
            request = request.header("content-type", "application/scim+json");
            serde_json::to_vec(&b).unwrap()
        }
        None => vec![],
    };
    f.send(request.body(Full::new(bytes::Bytes::from(bytes))).unwrap()).await
}

fn content_type(response: &hyper::Response<recruit_http::Body>) -> &str {
    response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Okta's documented flow: look the user up by `userName`, create it, find it, change it, and
/// deactivate it with a no-path replace; Okta never deletes.
#[tokio::test]
async fn okta_s_requests_provision_and_deactivate_a_user() {
    let (f, token) = scim(ORG_A).await;
    let lookup =
        "/Users?filter=userName%20eq%20%22test.user%40okta.local%22&startIndex=1&count=100";
    let (status, response, body) = call(&f, "GET", lookup, Some(&token), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(content_type(&response), "application/scim+json");
    assert_eq!(
        (body["totalResults"].as_u64(), body["Resources"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );

    let create = json!({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName":"test.user@okta.local","name":{"givenName":"Test","familyName":"User"},
        "emails":[{"primary":true,"value":"test.user@okta.local","type":"work"}],
        "displayName":"Test User","locale":"en-US","externalId":"00ujl29u0le5T6Aj10h7",
        "groups":[],"password":"1mz050nq","active":true});
    let (status, response, user) =
        call(&f, "POST", "/Users", Some(&token), Some(create.clone())).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let id = user["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("usr_"));
    assert_eq!(response.headers()["location"], format!("http://127.0.0.1:8080/scim/v2/Users/{id}"));
    assert_eq!(
        (user["userName"].as_str(), user["displayName"].as_str()),
        (Some("test.user@okta.local"), Some("Test User"))
    );
    assert_eq!(user["emails"], json!([{"value": "test.user@okta.local"}]));
    assert_eq!(user["active"], json!(true));
    assert!(user.get("password").is_none());

    // The same userName again, its case aside: SCIM's uniqueness error.
    let mut twin = create.clone();
    twin["userName"] = json!("TEST.USER@okta.local");
    let (status, _, error) = call(&f, "POST", "/Users", Some(&token), Some(twin)).await;
    assert_eq!(
        (status, &error["scimType"], &error["schemas"]),
        (StatusCode::CONFLICT, &json!("uniqueness"), &json!([ERROR]))
    );

    let (_, _, found) = call(&f, "GET", lookup, Some(&token), None).await;
    assert_eq!(
        (found["totalResults"].as_u64(), found["Resources"][0]["id"].as_str()),
        (Some(1), Some(id.as_str()))
    );
    let by_external = "/Users?filter=externalId%20eq%20%2200ujl29u0le5T6Aj10h7%22";
    let (_, _, found) = call(&f, "GET", by_external, Some(&token), None).await;
    assert_eq!(found["Resources"][0]["id"].as_str(), Some(id.as_str()));

    // The user's API token works until the deactivation, and never after it.
    let profile = org(ORG_A);
    let (_, api) = f
        .service
        .create_token(profile, id.parse().unwrap(), "t".into(), vec![Scope::UsersRead], None)
        .await
        .unwrap();
    assert_eq!(f.get("/v1/me", Some(&api)).await.0, StatusCode::OK);
    let deactivate = json!({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations":[{"op":"replace","value":{"active":false}}]});
    let (status, _, user) =
        call(&f, "PATCH", &format!("/Users/{id}"), Some(&token), Some(deactivate)).await;
    assert_eq!((status, &user["active"]), (StatusCode::OK, &json!(false)), "{user}");
    assert_eq!(f.get("/v1/me", Some(&api)).await.0, StatusCode::UNAUTHORIZED);

    // Reactivated by a PUT of the whole user: it signs in again with new credentials only.
    let (status, _, user) =
        call(&f, "PUT", &format!("/Users/{id}"), Some(&token), Some(create)).await;
    assert_eq!((status, &user["active"]), (StatusCode::OK, &json!(true)), "{user}");
    assert_eq!(
        f.get("/v1/me", Some(&api)).await.0,
        StatusCode::UNAUTHORIZED,
        "its tokens stay revoked"
    );
}

/// Entra ID's documented bodies: capitalised `op`s, `"False"` as a string, a replace of a
/// filtered path, and the manager as a bare id on the extension's full path.
#[tokio::test]
async fn entra_id_s_requests_are_accepted_as_it_sends_them() {
    let (f, token) = scim(ORG_A).await;
    let create = json!({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User",
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
        "externalId":"0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef","userName":"Test_User_ab6490ee@testuser.com",
        "active":true,"emails":[{"primary":true,"type":"work","value":"Test_User_fd0ea19b@testuser.com"}],
        "meta":{"resourceType":"User"},"name":{"formatted":"givenName familyName","familyName":"familyName","givenName":"givenName"},
        "roles":[]});
    let (status, _, user) = call(&f, "POST", "/Users", Some(&token), Some(create)).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let id = user["id"].as_str().unwrap().to_owned();
    assert_eq!(user["displayName"], "givenName familyName");

    let manager = user_id(ORG_A, Role::Admin).uuid().to_string();
    let patch = json!({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
        {"op":"Replace","path":"displayName","value":"Pvlo"},
        {"op":"Replace","path":"emails[type eq \"work\"].value","value":"TestBcwqnm@test.microsoft.com"},
        {"op":"Replace","path":"externalId","value":"Eqpj"},
        {"op":"Add","path":"title","value":"Engineer"},
        {"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":manager}]});
    let (status, _, user) =
        call(&f, "PATCH", &format!("/Users/{id}"), Some(&token), Some(patch)).await;
    assert_eq!(status, StatusCode::OK, "{user}");
    assert_eq!(
        (user["displayName"].as_str(), user["externalId"].as_str()),
        (Some("Pvlo"), Some("Eqpj"))
    );
    assert_eq!(user["emails"], json!([{"value": "TestBcwqnm@test.microsoft.com"}]));
    let stored = f.store.user(org(ORG_A), id.parse().unwrap()).await.unwrap();
    assert_eq!(
        (stored.manager, stored.title.as_deref()),
        (Some(user_id(ORG_A, Role::Admin)), Some("Engineer"))
    );

    let off = json!({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations":[{"op":"Replace","path":"active","value":"False"}]});
    let (status, _, user) =
        call(&f, "PATCH", &format!("/Users/{id}"), Some(&token), Some(off)).await;
    assert_eq!((status, &user["active"]), (StatusCode::OK, &json!(false)));

    // A manager of another organization, or the user itself, is refused.
    for bad in [user_id(ORG_B, Role::Owner).uuid().to_string(), id.clone()] {
        let patch = json!({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
            {"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":{"value": bad}}]});
        let (status, _, error) =
            call(&f, "PATCH", &format!("/Users/{id}"), Some(&token), Some(patch)).await;
        assert_eq!(
            (status, &error["scimType"]),
            (StatusCode::BAD_REQUEST, &json!("invalidValue")),
            "{error}"
        );
    }

    // Deleted: gone for SCIM, kept for the ledgers that name it.
    let (status, _, _) = call(&f, "DELETE", &format!("/Users/{id}"), Some(&token), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, error) = call(&f, "GET", &format!("/Users/{id}"), Some(&token), None).await;
    assert_eq!((status, &error["status"]), (StatusCode::NOT_FOUND, &json!("404")));
    let kept = f.store.user(org(ORG_A), id.parse().unwrap()).await.unwrap();
    assert_eq!((kept.name.as_str(), kept.status), ("Pvlo", recruit_domain::UserStatus::Removed));
}

/// Deactivating a user ends their console session and, for the owner the SCIM token acts as,
/// the SCIM token itself; the change is a privacy ledger entry that says what it ended.
#[tokio::test]
async fn deactivation_ends_console_sessions_and_is_recorded() {
    let (f, token) = scim(ORG_A).await;
    let owner = user_id(ORG_A, Role::Owner);
    let api = f.token(ORG_A, Role::Owner, &[Scope::AuditLogsRead]).await;
    let session = f
        .service
        .open_console_session(
            recruit_service::console::SignIn::Token(&api),
            &recruit_service::RequestContext::rest("scim-test", None),
        )
        .await
        .unwrap();
    assert!(f.service.console_caller(&session.secret, None).await.is_ok());
    let off = json!({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations":[{"op":"replace","path":"active","value":false}]});
    let (status, _, _) =
        call(&f, "PATCH", &format!("/Users/{owner}"), Some(&token), Some(off)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(f.service.console_caller(&session.secret, None).await.is_err(), "the session ended");
    let (status, response, error) = call(&f, "GET", "/Users", Some(&token), None).await;
    assert_eq!((status, &error["schemas"]), (StatusCode::UNAUTHORIZED, &json!([ERROR])));
    assert!(response.headers().contains_key("www-authenticate"));

    let now = recruit_domain::Timestamp::now().unix_micros();
    let at = |d: i64| recruit_domain::Timestamp::from_unix_micros(now + d).unwrap();
    let query = recruit_ports::PrivacyLogQuery {
        organization_id: org(ORG_A),
        window: recruit_domain::TimeWindow::new(at(-3_600_000_000), at(3_600_000_000)).unwrap(),
        ids: None,
        after: None,
        filter: Default::default(),
        limit: 1000,
    };
    let read = recruit_ports::testkit::record(ORG_A, 1);
    let entries = f.store.read_privacy_audit_logs(&query, &read).await.unwrap().entries;
    let recorded = entries.iter().find(|e| e.access_menu == "SCIM").expect("a SCIM entry");
    assert_eq!(recorded.access_menu_path, "PATCH /scim/v2/Users");
    assert!(recorded.purpose.as_deref().is_some_and(|p| p.contains("ended")), "{recorded:?}");
}

/// Fields a SCIM source writes are refused by the API's profile update, as the
/// specification says (`CANNOT_UPDATE_SYNC_MANAGED_FIELDS`, source `SCIM`).
#[tokio::test]
async fn what_scim_writes_the_api_refuses_as_sync_managed() {
    let (f, token) = scim(ORG_A).await;
    let create =
        json!({"userName": "kim@org-a.example", "displayName": "김민지", "title": "Recruiter"});
    let (status, _, user) = call(&f, "POST", "/Users", Some(&token), Some(create)).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let writer = f.token(ORG_A, Role::Owner, &[Scope::UsersWrite, Scope::UsersRead]).await;
    let id = user["id"].as_str().unwrap();
    let (_, response, _) = f.get(&format!("/v1/users/{id}"), Some(&writer)).await;
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let request = hyper::Request::patch(format!("/v1/users/{id}"))
        .header("authorization", format!("Bearer {writer}"))
        .header("content-type", "application/merge-patch+json")
        .header("if-match", etag)
        .body(Full::new(bytes::Bytes::from(r#"{"name":"Other","linkedin_url":null}"#)))
        .unwrap();
    let (status, _, body) = f.send(request).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "CANNOT_UPDATE_SYNC_MANAGED_FIELDS");
    assert_eq!(body["error"]["details"], json!([{"field": "name", "source": "SCIM"}]));
}

/// Every refusal on `/scim/v2` is SCIM's error message; the API's credentials do not open it,
/// and a SCIM token opens nothing else.
#[tokio::test]
async fn refusals_are_scim_errors_and_credentials_stay_in_their_lane() {
    let (f, token) = scim(ORG_A).await;
    let api = f.token(ORG_A, Role::Owner, &Scope::ALL).await;
    for (method, path, token, body, status, scim_type) in [
        ("GET", "/Users", None, None, 401, None),
        ("GET", "/Users", Some(api.as_str()), None, 401, None),
        (
            "GET",
            "/Users?filter=userName%20co%20%22x%22",
            Some(&token),
            None,
            400,
            Some("invalidFilter"),
        ),
        (
            "GET",
            "/Users?filter=title%20eq%20%22x%22",
            Some(&token),
            None,
            400,
            Some("invalidFilter"),
        ),
        ("GET", "/Users?count=many", Some(&token), None, 400, Some("invalidValue")),
        ("GET", "/Users/usr_00000000000000000000000000000bad", Some(&token), None, 404, None),
        ("GET", "/Users/not-an-id", Some(&token), None, 404, None),
        ("GET", "/Groups", Some(&token), None, 404, None),
        ("DELETE", "/Users", Some(&token), None, 405, None),
        (
            "POST",
            "/Users",
            Some(&token),
            Some(json!({"displayName": "no userName"})),
            400,
            Some("invalidValue"),
        ),
        (
            "POST",
            "/Users",
            Some(&token),
            Some(json!(["not", "an", "object"])),
            400,
            Some("invalidSyntax"),
        ),
    ] {
        let (got, response, body) = call(&f, method, path, token, body).await;
        assert_eq!(got.as_u16(), status, "{method} {path}: {body}");
        assert_eq!(body["schemas"], json!([ERROR]), "{method} {path}");
        assert_eq!(body["status"], json!(status.to_string()));
        assert_eq!(body.get("scimType").and_then(Value::as_str), scim_type, "{method} {path}");
        assert_eq!(content_type(&response), "application/scim+json");
    }
    let request = hyper::Request::post("/scim/v2/Users")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/scim+json")
        .body(Full::new(bytes::Bytes::from_static(b"{not json")))
        .unwrap();
    let (status, _, body) = f.send(request).await;
    assert_eq!((status, &body["scimType"]), (StatusCode::BAD_REQUEST, &json!("invalidSyntax")));
    assert_eq!(
        f.get("/v1/me", Some(&token)).await.0,
        StatusCode::UNAUTHORIZED,
        "a SCIM token is not an API token"
    );

    // A SCIM token is an owner's: anyone else is refused one.
    let member = user_id(ORG_A, Role::Member);
    let refused =
        recruit_service::auth::create_scim_token(&*f.store, member, "x".into(), None).await;
    assert_eq!(refused.unwrap_err().code, recruit_domain::ErrorCode::PermissionDenied);
}
