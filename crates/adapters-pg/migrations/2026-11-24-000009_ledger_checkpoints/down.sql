DROP TABLE ledger_checkpoints;
