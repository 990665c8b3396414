//! Turns `docs/openapi.yaml`, the API's contract, into the JSON served at `GET /openapi.json`,
//! so the server carries the document without parsing YAML at run time, and a document that
//! is not valid YAML fails the build.

use std::path::PathBuf;

fn main() {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.yaml");
    println!("cargo::rerun-if-changed={}", source.display());
    let yaml = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let document: serde_json::Value = serde_norway::from_str(&yaml)
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", source.display()));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let json = serde_json::to_vec(&document).expect("a JSON value serializes");
    std::fs::write(out.join("openapi.json"), json).expect("OUT_DIR is writable");
}
