//! Text game archives (GGF, transcripts, JSON lines) loaded as every command loads
//! them; each game read is written in the three text formats and read back the same.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::game_archive(data)));
