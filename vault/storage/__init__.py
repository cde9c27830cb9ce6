"""The folder and its index: safe paths, atomic writes, trash, watch, SQLite index,
migrations, sync, the snapshot every signal reads, the link graph and the doctor report."""
