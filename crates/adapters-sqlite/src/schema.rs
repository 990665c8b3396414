//! The tables of the SQLite schema, as diesel sees them (see `migrations/`), declared by the
//! tables both stores share.

recruit_adapters_diesel::tables! {
    Id = Binary,
    Stamp = BigInt,
    TextList = Text,
    IdList = Text,
    Document = Text,
}
