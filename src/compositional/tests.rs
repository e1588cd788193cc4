//! Unit tests of the engine on small programs (real solver sessions).
