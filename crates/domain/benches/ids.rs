//! Benchmarks of identifier parsing and formatting.
fn main() {}
