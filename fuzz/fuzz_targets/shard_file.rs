//! Shard files (`shard-IIII.tbs`) and shard checkpoints (`.partial`) of a plan.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::shard_file(data)));
