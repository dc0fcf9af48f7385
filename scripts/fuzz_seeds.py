#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs (fuzz/seeds/TARGET/*) from real files: the
bundled WTHOR archives, book and weights, a small book built and exported by thorbook,
and ../shared/ffo when present. Run from the repository root after `cargo build --release`.
Each seed is small (libFuzzer mutates best below a few kB)."""
import gzip, os, struct, subprocess, sys, tempfile, zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
THORBOOK = os.path.join(ROOT, "target", "release", "thorbook")


def put(target, name, data):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def thor_prefix(path, records, record_len, names):
    """The file's header with its count set to `records`, then its first records."""
    raw = open(path, "rb").read()
    header = bytearray(raw[:16])
    if names:
        struct.pack_into("<H", header, 8, records)
    else:
        struct.pack_into("<I", header, 4, records)
    return bytes(header) + raw[16 : 16 + records * record_len]


def thor_seeds():
    data = os.path.join(ROOT, "data", "thor")
    wtb = thor_prefix(os.path.join(data, "WTH_2015.wtb"), 6, 68, False)
    put("thor_file", "wtb", b"\x00" + wtb)
    put("thor_file", "wtb-with-names", b"\x04" + wtb)
    put("thor_file", "wtb-strict", b"\x0c" + wtb)
    put("thor_file", "jou", b"\x01" + thor_prefix(os.path.join(data, "WTHOR.JOU"), 24, 20, True))
    put("thor_file", "trn", b"\x02" + thor_prefix(os.path.join(data, "WTHOR.TRN"), 12, 26, True))
    shared = os.path.join(ROOT, "..", "shared", "thor", "WTH_1977.wtb")
    if os.path.exists(shared):
        put("thor_file", "wtb-1977", b"\x00" + thor_prefix(shared, 4, 68, False))


def book_seeds():
    tmp = tempfile.mkdtemp()
    small = os.path.join(tmp, "small.tbk")
    run = lambda *a: subprocess.run([THORBOOK, *a], check=True, capture_output=True)
    run("book", "build", os.path.join(ROOT, "data", "thor", "WTH_2015.wtb"),
        "--max-ply", "5", "--min-games", "3", "--depth", "2", "-o", small)
    tbk = open(small, "rb").read()
    put("book_open", "small", b"\x00" + tbk)
    put("book_open", "small-repair", b"\x01" + tbk)
    put("book_import", "small.tbk", tbk)
    for fmt, ext in [("edax", "dat"), ("egbk3", "egbk3"), ("text", "txt")]:
        out = os.path.join(tmp, "small." + ext)
        run("book", "export", "--book", small, "--format", fmt, "-o", out)
        put("book_import", "small." + ext, open(out, "rb").read())
    # Edax's own text export: board, side, level, leaf move and score.
    put("book_import", "edax-text",
        "---------------------------OX------XO--------------------------- X,18,F5,0\n"
        "---------------------------OX------XXX-------------------------- O,18,D6,-1\n")


def text_seeds():
    start = "---------------------------OX------XO--------------------------- X"
    put("position_text", "board", start)
    put("position_text", "board-white", start.replace("X", "*")[:-1] + "O ; F5:+2")
    put("position_text", "moves", "f5d6c3d3c4f4f6f3e6e7")
    put("position_text", "moves-spaced", "F5 D6 C3 pass e3-f4,g5")
    ffo = os.path.join(ROOT, "..", "shared", "ffo", "fforum-1-19.obf")
    if os.path.exists(ffo):
        lines = open(ffo).read().splitlines()
        put("obf", "ffo-1-19", "\n".join(lines[:4]) + "\n")
        put("position_text", "ffo-1", lines[0])
    put("obf", "handmade",
        "% comment\n" + start + "; F5:+0; D3:+0;\n\n" + start[:-1] + "O;\n")


def protocol_seeds():
    put("ggf", "nboard",
        "(;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]RE[?]TI[15:00]TY[8]"
        "BO[8 ---------------------------O*------*O--------------------------- *]"
        "B[F5]W[F6]B[D3]W[C5]B[E6]W[F7]B[E7]W[F4];)")
    put("ggf", "escaped", "(;GM[Othello]PB[a\\]b]PW[c\\\\d]TY[8r]B[f5/1.2/3];)")
    put("gtp", "session",
        "1 protocol_version\nname\nboardsize 8\nclear_board\nplay b f5\ngenmove w\n"
        "time_settings 60 0 0\ntime_left b 30 0\nundo\nshowboard\nfinal_score\nlist_commands\n"
        "known_command genmove\nkomi 0\n# comment\n2 quit\n")
    put("gtp", "bad", "play x f5\nplay b z9\ngenmove\nboardsize 10\nundo\nundo\n")
    put("nboard", "session",
        "nboard 2\nset depth 2\nset game (;GM[Othello]PC[NBoard]PB[a]PW[b]RE[?]TI[15:00]TY[8]"
        "BO[8 ---------------------------O*------*O--------------------------- *]B[F5];)\n"
        "set contempt 0\nping 1\nmove d6/0.5/1.2\nhint 3\ngo\nlearn\nanalyze\nmove pa\nquit\n")
    put("explorer", "position", b"\x00/api/position?moves=f5d6c3d3c4")
    put("explorer", "board",
        b"\x00/api/position?board=---------------------------OX------XO---------------------------%20X&level=1")
    put("explorer", "games", b"\x00/api/games?moves=f5d6&sort=oldest&limit=5&offset=2")
    put("explorer", "svg", b"\x01/api/svg?moves=f5f4e3")
    put("explorer", "page", b"\x00/")


def weight_seeds():
    plain = gzip.decompress(open(os.path.join(ROOT, "data", "eval.tbe.gz"), "rb").read())
    put("eval_weights", "header", b"\x00" + plain[:256])
    put("eval_weights", "gzip-header", b"\x00" + gzip.compress(plain[:256]))


def leaf_log_seeds():
    """A search log of three entries (the layout in book-format.md), whole and cut."""
    header = b"TBLEAFL1" + struct.pack("<Q", 0x1234_5678_9ABC_DEF0) + bytes([15]) + bytes(15)
    entries = b""
    for key, mv, score, depth, flags in [(7, 19, 3, 14, 0), (0xFFFF_0000_1111_2222, 64, -64, 0, 1), (9, 255, 0, 0, 1)]:
        e = struct.pack("<QBbBB", key, mv, score, depth, flags)
        entries += e + struct.pack("<I", zlib.crc32(e))
    put("leaf_log", "three", b"\x00" + header + entries)
    put("leaf_log", "cut", b"\x01" + header + entries[:40])


if __name__ == "__main__":
    if not os.path.exists(THORBOOK):
        sys.exit("build thorbook first: cargo build --release")
    thor_seeds(); book_seeds(); text_seeds(); protocol_seeds(); weight_seeds(); leaf_log_seeds()
    print("seeds written to", SEEDS)
