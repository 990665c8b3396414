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
    let path = root.join("tests/Cargo.toml");
    let manifest = read_manifest(&path);
    out.insert(package_name(&manifest, &path), (path, manifest));
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
    ("recruit-adapters-pg", &["recruit-domain", "recruit-ports"]),
    ("recruit-adapters-sqlite", &["recruit-domain", "recruit-ports"]),
    ("recruit-mcp", &["recruit-domain", "recruit-service"]),
    ("recruit-http", &["recruit-domain", "recruit-ports", "recruit-service", "recruit-mcp"]),
    (
        "recruitd",
        &[
            "recruit-domain",
            "recruit-ports",
            "recruit-service",
            "recruit-adapters-pg",
            "recruit-adapters-sqlite",
            "recruit-mcp",
            "recruit-http",
        ],
    ),
    ("recruit-tests", &[]),
];

/// Third-party crates only some layers may name, and which.
const CONFINED: &[(&str, &[&str])] = &[
    ("diesel", &["recruit-adapters-pg", "recruit-adapters-sqlite"]),
    ("diesel-async", &["recruit-adapters-pg", "recruit-adapters-sqlite"]),
    ("diesel_migrations", &["recruit-adapters-pg", "recruit-adapters-sqlite"]),
    ("deadpool", &["recruit-adapters-pg", "recruit-adapters-sqlite"]),
    ("libsqlite3-sys", &["recruit-adapters-sqlite"]),
    ("tokio-postgres", &["recruit-adapters-pg"]),
    ("hyper", &["recruit-http", "recruitd"]),
    ("hyper-util", &["recruit-http", "recruitd"]),
    ("rmcp", &["recruit-mcp"]),
];

/// The only third-party crates `recruit-domain` may depend on.
const DOMAIN_DEPS: &[&str] = &["chrono", "serde", "thiserror", "uuid"];

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
fn the_domain_crate_keeps_its_dependencies_few() {
    let members = members();
    let (path, manifest) = &members["recruit-domain"];
    for (dep, _) in deps(manifest, "dependencies") {
        assert!(
            DOMAIN_DEPS.contains(&dep),
            "{}: recruit-domain must not depend on `{dep}`; it is embedded by other services and \
             keeps to {DOMAIN_DEPS:?}",
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
