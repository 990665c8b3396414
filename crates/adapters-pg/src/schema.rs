//! The tables of the PostgreSQL schema, as diesel sees them (see `migrations/`), declared by
//! the tables both stores share.

recruit_adapters_diesel::tables! {
    Id = Uuid,
    Stamp = Timestamptz,
    TextList = Array<Text>,
    IdList = Array<Uuid>,
    Document = Jsonb,
}
