"""Learning from use: formulas, rewards, activation, the learned state and pair table, the
append-only event log (ledger) that every learned number is replayed from, and its audit."""
