//! The results folder: `results.jsonl` (one flushed line per lap), `env.json`, server logs.

pub mod record;
