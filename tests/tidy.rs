//! Tidy: conventions of the codebase, checked by reading its files (as rust-analyzer's
//! `xtask/src/tidy.rs` does). A failure names the file and the rule.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root: the folder above this package.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The manifests of every workspace member, by package name.
fn members() -> BTreeMap<String, (PathBuf, toml::Table)> {
    let root = root();
    let mut out = BTreeMap::new();
    for dir in ["crates", "bins"] {
        let Ok(entries) = fs::read_dir(root.join(dir)) else { continue };
        for entry in entries {
            let path = entry.expect("readable directory").path().join("Cargo.toml");
            if path.exists() {
                let manifest = read_manifest(&path);
                out.insert(package_name(&manifest, &path), (path, manifest));
            }
        }
    }
    for path in [root.join("tests/Cargo.toml"), root.join("bench/lean/Cargo.toml")] {
        let manifest = read_manifest(&path);
        out.insert(package_name(&manifest, &path), (path, manifest));
    }
    out
}

fn read_manifest(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn package_name(manifest: &toml::Table, path: &Path) -> String {
    manifest["package"]["name"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no package name", path.display()))
        .to_owned()
}

/// The names of the dependencies in one table (`dependencies`, `dev-dependencies`, …).
fn deps<'a>(
    manifest: &'a toml::Table,
    table: &str,
) -> impl Iterator<Item = (&'a str, &'a toml::Value)> {
    manifest
        .get(table)
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v))
}

/// The internal crates each layer may depend on (normal dependencies). A crate not listed
/// here may not exist: add it with its rule.
const LAYERS: &[(&str, &[&str])] = &[
    ("recruit-domain", &[]),
    ("recruit-ports", &["recruit-domain"]),
    ("recruit-service", &["recruit-domain", "recruit-ports"]),
    ("recruit-adapters-diesel", &["recruit-domain", "recruit-ports"]),
    ("recruit-adapters-pg", &["recruit-domain", "recruit-ports", "recruit-adapters-diesel"]),
    ("recruit-adapters-sqlite", &["recruit-domain", "recruit-ports", "recruit-adapters-diesel"]),
    ("recruit-mcp", &["recruit-domain", "recruit-service"]),
    ("recruit-console", &["recruit-domain", "recruit-service"]),
    (
        "recruit-http",
        &["recruit-domain", "recruit-ports", "recruit-service", "recruit-mcp", "recruit-console"],
    ),
    (
        "recruitd",
        &[
            "recruit-domain",
            "recruit-ports",
            "recruit-service",
            "recruit-adapters-pg",
            "recruit-adapters-sqlite",
            "recruit-mcp",
            "recruit-console",
            "recruit-http",
        ],
    ),
    ("recruit-client", &["recruit-domain"]),
    // The benchmarks' reference stands for a server written without recruitd's layers above
    // the ports: it shares only the resources and the rows' translations.
    ("recruit-bench-lean", &["recruit-domain", "recruit-ports"]),
    ("recruit-tests", &[]),
];

/// Third-party crates only some layers may name, and which.
const CONFINED: &[(&str, &[&str])] = &[
    ("diesel", &["recruit-adapters-diesel", "recruit-adapters-pg", "recruit-adapters-sqlite"]),
    (
        "diesel-async",
        &["recruit-adapters-diesel", "recruit-adapters-pg", "recruit-adapters-sqlite"],
    ),
    ("diesel_migrations", &["recruit-adapters-pg", "recruit-adapters-sqlite"]),
    (
        "deadpool",
        &[
            "recruit-adapters-diesel",
            "recruit-adapters-pg",
            "recruit-adapters-sqlite",
            "recruit-bench-lean",
        ],
    ),
    ("libsqlite3-sys", &["recruit-adapters-sqlite"]),
    ("tokio-postgres", &["recruit-adapters-pg", "recruit-bench-lean"]),
    ("hyper", &["recruit-http", "recruitd", "recruit-bench-lean"]),
    ("hyper-util", &["recruit-http", "recruitd", "recruit-bench-lean"]),
    ("rmcp", &["recruit-mcp"]),
    // Outward HTTP: the client crate, and the server's client for identity providers.
    ("reqwest", &["recruit-client", "recruitd"]),
    ("rustls", &["recruit-client", "recruitd"]),
    ("tokio-rustls", &["recruitd"]),
    ("openidconnect", &["recruit-service"]),
];

/// Internal crates a member may use in its tests, examples and benchmarks only
/// (`[dev-dependencies]`) although its layer may not depend on them, and why. Anything else a
/// member's tests or examples name must be a dependency its layer allows.
const DEV_ONLY: &[(&str, &str, &str)] = &[
    ("recruit-service", "recruit-adapters-sqlite", "its tests run operations on a real store"),
    (
        "recruit-service",
        "recruit-adapters-pg",
        "its examples measure import throughput and make benchmark data on PostgreSQL",
    ),
    ("recruit-http", "recruit-adapters-sqlite", "its tests answer requests from a real store"),
    ("recruit-console", "recruit-adapters-sqlite", "its tests render pages from a real store"),
    ("recruit-console", "recruit-ports", "its tests load the ports' test world"),
    ("recruit-adapters-pg", "recruit-adapters-pg", "its tests use its own `testkit` feature"),
    (
        "recruit-adapters-sqlite",
        "recruit-adapters-sqlite",
        "its tests use its own `testkit` feature",
    ),
    ("recruitd", "recruit-adapters-pg", "its tests start PostgreSQL clusters with the testkit"),
    ("recruitd", "recruit-client", "its tests drive the real server with the client"),
    ("recruit-tests", "recruit-mcp", "tidy holds docs/agents.md to the tools served"),
];

/// The only third-party crates `recruit-domain` may depend on.
const DOMAIN_DEPS: &[&str] = &["chrono", "serde", "thiserror", "uuid"];

/// What `recruit-domain` may depend on besides, optionally, behind its `chain` feature (off by
/// default): the ledgers' hash chain needs SHA-256 and canonical JSON, its checkpoints Ed25519
/// and base64url.
const DOMAIN_CHAIN_DEPS: &[&str] = &["base64", "ed25519-dalek", "serde_json", "sha2"];

#[test]
fn every_layer_depends_only_on_the_layers_below_it() {
    let mut problems = vec![];
    for (name, (path, manifest)) in members() {
        let Some((_, allowed)) = LAYERS.iter().find(|(n, _)| *n == name) else {
            problems
                .push(format!("{}: package `{name}` has no layer rule in tidy.rs", path.display()));
            continue;
        };
        for (dep, _) in deps(&manifest, "dependencies") {
            if dep.starts_with("recruit") && !allowed.contains(&dep) {
                problems.push(format!("{}: `{name}` must not depend on `{dep}`", path.display()));
            }
            if let Some((_, owners)) = CONFINED.iter().find(|(c, _)| *c == dep)
                && !owners.contains(&name.as_str())
            {
                problems.push(format!(
                    "{}: only {owners:?} may depend on `{dep}`, not `{name}`",
                    path.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "layering violated:\n{}", problems.join("\n"));
}

#[test]
fn dev_only_dependencies_that_cross_layers_are_listed_with_their_reason() {
    let mut problems = vec![];
    for (name, (path, manifest)) in members() {
        let allowed = LAYERS.iter().find(|(n, _)| *n == name).map_or(&[][..], |(_, a)| *a);
        for (dep, _) in deps(&manifest, "dev-dependencies") {
            let listed = DEV_ONLY.iter().any(|(m, d, _)| *m == name && *d == dep);
            if dep.starts_with("recruit") && dep != name && !allowed.contains(&dep) && !listed {
                problems.push(format!(
                    "{}: `{name}` has `{dep}` in [dev-dependencies]; list it in tidy.rs's \
                     DEV_ONLY with the reason, or drop it",
                    path.display()
                ));
            }
        }
    }
    for (member, dep, _) in DEV_ONLY {
        let listed = members()
            .get(*member)
            .is_some_and(|(_, m)| deps(m, "dev-dependencies").any(|(d, _)| d == *dep));
        if !listed {
            problems.push(format!("tidy.rs: DEV_ONLY names `{member}` → `{dep}`, which is gone"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The internal crates a Rust file names (`recruit_service::…`, `use recruit_ports`).
fn named_crates(text: &str) -> Vec<String> {
    let mut out = vec![];
    for (i, _) in text.match_indices("recruit_") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String =
            text[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let crate_name = name.replace('_', "-");
        if !out.contains(&crate_name) {
            out.push(crate_name);
        }
    }
    out
}

#[test]
fn examples_tests_and_benchmarks_name_only_what_their_layer_or_dev_only_allows() {
    let mut problems = vec![];
    let members = members();
    for (name, (path, _)) in &members {
        let dir = path.parent().expect("a manifest is in a folder");
        let allowed = LAYERS.iter().find(|(n, _)| n == name).map_or(&[][..], |(_, a)| *a);
        let mut files = vec![];
        for sub in ["examples", "tests", "benches"] {
            rust_files(&dir.join(sub), &mut files);
        }
        for file in files {
            let text = fs::read_to_string(&file).unwrap_or_default();
            for used in named_crates(&text) {
                let internal = members.contains_key(&used);
                let ok = !internal
                    || used == *name
                    || allowed.contains(&used.as_str())
                    || DEV_ONLY.iter().any(|(m, d, _)| m == name && *d == used);
                if !ok {
                    problems.push(format!(
                        "{}: names `{used}`, which `{name}` may use neither as a layer nor as a \
                         listed dev-only dependency",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_case_of_the_contract_suite_is_run_by_store_contract_tests() {
    let dir = root().join("crates/ports/src/testkit");
    let path = dir.join("mod.rs");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (_, after) = text
        .split_once("$crate::store_contract_tests!(@cases $make;")
        .expect("testkit/mod.rs's store_contract_tests! lists its cases after `@cases $make;`");
    let (listed, _) = after.split_once(");").expect("the list of cases ends with `);`");
    let listed: Vec<&str> = listed.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    // The cases live in every file of the suite's folder.
    let mut files = vec![];
    rust_files(&dir, &mut files);
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|f| fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
        .collect();
    // `pub async fn name(store: &dyn Store)`, the parameters possibly on lines of their own.
    let cases: Vec<&str> = texts
        .iter()
        .flat_map(|text| text.split("\npub async fn ").skip(1))
        .filter_map(|rest| rest.split_once('('))
        .filter(|(_, params)| {
            params
                .split(')')
                .next()
                .is_some_and(|p| p.trim().trim_end_matches(',') == "store: &dyn Store")
        })
        .map(|(name, _)| name)
        .collect();
    assert!(cases.len() > 10, "tidy found too few contract cases in {}", dir.display());
    let missing: Vec<_> = cases.iter().filter(|c| !listed.contains(c)).collect();
    assert!(
        missing.is_empty(),
        "{}: contract cases no adapter runs (add them to store_contract_tests! in mod.rs): \
         {missing:?}",
        dir.display()
    );
    let unknown: Vec<_> = listed.iter().filter(|c| !cases.contains(c)).collect();
    assert!(unknown.is_empty(), "store_contract_tests! lists cases that do not exist: {unknown:?}");
}

#[test]
fn the_domain_crate_keeps_its_dependencies_few() {
    let members = members();
    let (path, manifest) = &members["recruit-domain"];
    for (dep, spec) in deps(manifest, "dependencies") {
        let optional = spec.get("optional").and_then(toml::Value::as_bool) == Some(true);
        assert!(
            DOMAIN_DEPS.contains(&dep) || (optional && DOMAIN_CHAIN_DEPS.contains(&dep)),
            "{}: recruit-domain must not depend on `{dep}`; it is embedded by other services and \
             keeps to {DOMAIN_DEPS:?} (and, optionally, {DOMAIN_CHAIN_DEPS:?})",
            path.display()
        );
    }
}

#[test]
fn every_member_takes_versions_and_lints_from_the_workspace() {
    let mut problems = vec![];
    for (name, (path, manifest)) in members() {
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            for (dep, spec) in deps(&manifest, table) {
                let inherited = spec.get("workspace").and_then(toml::Value::as_bool) == Some(true);
                if !inherited {
                    problems.push(format!(
                        "{}: `{dep}` in [{table}] must say `workspace = true`; versions live in \
                         the root Cargo.toml",
                        path.display()
                    ));
                }
            }
        }
        let lints =
            manifest.get("lints").and_then(|l| l.get("workspace")).and_then(toml::Value::as_bool);
        if lints != Some(true) {
            problems.push(format!("{}: `{name}` needs `[lints] workspace = true`", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every Rust file under `dir`, skipping build output.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.expect("readable directory").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_source_file_opens_with_a_line_saying_what_it_is() {
    let root = root();
    let mut files = vec![];
    for dir in ["crates", "bins", "tests", "bench"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 5, "tidy found too few files under {}", root.display());
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` first line:\n{}", missing.join("\n"));
}

/// The lines of `text` from the heading `heading` to the next heading of its level or above.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = text.lines().skip_while(|l| *l != heading);
    lines.next().unwrap_or_else(|| panic!("no heading `{heading}`"));
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// What is between backticks in `text`, in order.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[test]
fn the_readme_layout_names_every_member_and_only_what_exists() {
    let root = root();
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    let layout = section(&readme, "## Layout");
    let mut problems = vec![];
    for (name, (path, _)) in members() {
        let dir = path.parent().expect("a manifest is in a folder").strip_prefix(&root).unwrap();
        let dir = dir.to_string_lossy();
        let listed = layout.iter().any(|l| {
            let mut words = l.split_whitespace();
            words.next().map(|d| d.trim_end_matches('/')) == Some(&*dir)
                && words.next().map(|n| n.trim_end_matches(':')) == Some(&name)
        });
        if !listed {
            problems.push(format!("README.md's layout has no line `{dir}  {name}: …`"));
        }
    }
    for line in layout.iter().filter(|l| !l.starts_with("```") && !l.trim().is_empty()) {
        let first = line.split_whitespace().next().unwrap_or_default();
        if !root.join(first).exists() {
            problems.push(format!("README.md's layout names `{first}`, which does not exist"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_decisions_index_lists_every_record_in_order() {
    let text = fs::read_to_string(root().join("docs/decisions.md")).expect("docs/decisions.md");
    let index: Vec<&str> =
        section(&text, "## Index").into_iter().filter_map(|l| l.strip_prefix("- ")).collect();
    let records: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter(|l| {
            l.strip_prefix('D').is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    assert_eq!(index, records, "docs/decisions.md: the index and the records' headings differ");
}

#[test]
fn the_agents_page_lists_every_tool_with_its_arguments() {
    let text = fs::read_to_string(root().join("docs/agents.md")).expect("docs/agents.md");
    let listed: Vec<(String, Vec<String>)> = section(&text, "## Tools")
        .into_iter()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let name = quoted(cells[1]).first().copied().unwrap_or_default().to_owned();
            let is_name =
                |w: &&str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            let mut arguments: Vec<String> =
                quoted(cells[2]).into_iter().filter(is_name).map(str::to_owned).collect();
            arguments.sort_unstable();
            (name, arguments)
        })
        .collect();
    let served: Vec<(String, Vec<String>)> = recruit_mcp::tool_arguments()
        .into_iter()
        .map(|(name, mut arguments)| {
            arguments.sort_unstable();
            (name.to_owned(), arguments)
        })
        .collect();
    assert_eq!(listed, served, "docs/agents.md: the tools table and the tools served differ");
}
