//! A plan's `plan.json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::plan_json(data));
