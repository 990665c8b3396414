//! Workspace-wide tests of recruitd. The library is empty; the suites are the test targets
//! beside it (`tidy.rs`: the conventions every crate keeps).
