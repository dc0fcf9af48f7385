//! Evaluation weight files (`--eval FILE`), plain or gzip-compressed. The first byte
//! says whether to repair the CRC-32 of a plain file first, so that mutations get past
//! the checksum to the ProbCut table and the note.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::eval_weights(data)));
