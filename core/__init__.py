"""Infrastructure every app may use and that imports nothing of ours: Redis, prepared SQL, client addresses, ids."""
