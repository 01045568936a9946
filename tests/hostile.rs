//! The hostile-input corpus (docs/security.md): every class of attack on files from strangers
//! and on folders Orogen writes, generated here (no binary is committed) and run against the
//! `orogen` command as a user runs it. Each case asserts its exact refusal (or acceptance,
//! where docs/security.md says the input is harmless), that it took at most 5 s and 512 MiB
//! (GNU time around the process), that a victim folder beside the project is byte-identical
//! afterwards, and that the previous build in the output folder is untouched. Ctrl-C cases
//! assert exit 130 within 1 s of the signal and no partial files. The table it prints is the
//! one docs/security.md reports (`cargo test -p orogen --test integration hostile:: -- --nocapture`).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GRAPH: &str = r#"{"format":"orogen-graph","version":2,"resolution":32,"nodes":[{"id":"c","type":"constant"}],"outputs":{"height":"c.out"}}"#;

/// A graph whose output imports `path`.
fn import(path: &str) -> String {
    format!(
        r#"{{"format":"orogen-graph","version":2,"resolution":32,"nodes":[{{"id":"dem","type":"import","params":{{"path":{}}}}}],"outputs":{{"h":"dem.out"}}}}"#,
        serde_json::Value::String(path.to_owned())
    )
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).expect("dir");
    }
    std::fs::write(path, bytes).expect("write");
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", path.display());
}

fn symlink(target: &Path, link: &Path) {
    if let Some(p) = link.parent() {
        std::fs::create_dir_all(p).expect("dir");
    }
    std::os::unix::fs::symlink(target, link).expect("symlink");
}

/// A sparse file of `len` zero bytes (costs no disk).
fn sparse(path: &Path, len: u64) {
    let f = std::fs::File::create(path).expect("create");
    f.set_len(len).expect("set_len");
}

/// Every file below `dir` (links as their target text), for before/after comparisons.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).expect("below").to_path_buf();
            let Ok(t) = e.file_type() else { continue };
            if t.is_symlink() {
                let target = std::fs::read_link(&p).expect("link");
                out.insert(rel, target.as_os_str().as_encoded_bytes().to_vec());
            } else if t.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(p);
            } else if t.is_file() {
                out.insert(rel, std::fs::read(&p).expect("read"));
            } else {
                out.insert(rel, b"<special>".to_vec());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Crafted files.

fn png(w: u32, h: u32, depth: u8, color: u8) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: [u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(&kind);
        crc.update(data);
        out.extend_from_slice(&kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[depth, color, 0, 0, 0]);
    chunk(&mut out, *b"IHDR", &ihdr);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![0u8; 1 << 16]).expect("deflate");
    chunk(&mut out, *b"IDAT", &z.finish().expect("deflate"));
    chunk(&mut out, *b"IEND", &[]);
    out
}

/// A little-endian TIFF of `w × h` float64 samples in 256² Deflate tiles that all share one
/// compressed tile of zeros (a few KB claiming gigabytes), except tile 0 when `nan` (one NaN
/// cell: the hole filling runs). `pixel_m`: a GeoTIFF pixel scale, if any.
fn tiff_f64(w: u32, h: u32, nan: bool, pixel_m: Option<f64>) -> Vec<u8> {
    const T: u32 = 256;
    let tiles = w.div_ceil(T) * h.div_ceil(T);
    let deflate = |data: &[u8]| {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(data).expect("deflate");
        z.finish().expect("deflate")
    };
    let zeros = deflate(&vec![0u8; (T * T * 8) as usize]);
    let first = if nan {
        let mut raw = vec![0u8; (T * T * 8) as usize];
        raw[..8].copy_from_slice(&f64::NAN.to_le_bytes());
        deflate(&raw)
    } else {
        zeros.clone()
    };
    // Header, then the two compressed tiles, then the IFD and its out-of-line values.
    let mut out = b"II\x2a\x00\0\0\0\0".to_vec();
    let zeros_at = out.len() as u32;
    out.extend_from_slice(&zeros);
    let first_at = out.len() as u32;
    out.extend_from_slice(&first);
    let mut entries: Vec<(u16, u16, u32, Vec<u8>)> = Vec::new();
    let short = |v: u16| v.to_le_bytes().to_vec();
    let long = |v: u32| v.to_le_bytes().to_vec();
    entries.push((256, 4, 1, long(w)));
    entries.push((257, 4, 1, long(h)));
    entries.push((258, 3, 1, short(64)));
    entries.push((259, 3, 1, short(8)));
    entries.push((262, 3, 1, short(1)));
    entries.push((277, 3, 1, short(1)));
    entries.push((284, 3, 1, short(1)));
    entries.push((322, 4, 1, long(T)));
    entries.push((323, 4, 1, long(T)));
    let offsets: Vec<u8> = (0..tiles)
        .flat_map(|k| if k == 0 { first_at } else { zeros_at }.to_le_bytes())
        .collect();
    let counts: Vec<u8> = (0..tiles)
        .flat_map(|k| (if k == 0 { first.len() } else { zeros.len() } as u32).to_le_bytes())
        .collect();
    entries.push((324, 4, tiles, offsets));
    entries.push((325, 4, tiles, counts));
    entries.push((339, 3, 1, short(3)));
    if let Some(p) = pixel_m {
        let d: Vec<u8> = [p, p, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        entries.push((33550, 12, 3, d));
        let t: Vec<u8> = [0.0f64, 0.0, 0.0, 0.0, 1000.0, 0.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        entries.push((33922, 12, 6, t));
    }
    entries.sort_by_key(|e| e.0);
    let ifd_at = out.len() as u32;
    let ifd_len = 2 + entries.len() as u32 * 12 + 4;
    let mut extra_at = ifd_at + ifd_len;
    let mut ifd = (entries.len() as u16).to_le_bytes().to_vec();
    let mut extra = Vec::new();
    for (tag, kind, count, mut value) in entries {
        ifd.extend_from_slice(&tag.to_le_bytes());
        ifd.extend_from_slice(&kind.to_le_bytes());
        ifd.extend_from_slice(&count.to_le_bytes());
        if value.len() <= 4 {
            value.resize(4, 0);
            ifd.extend_from_slice(&value);
        } else {
            ifd.extend_from_slice(&extra_at.to_le_bytes());
            extra_at += value.len() as u32;
            extra.extend_from_slice(&value);
        }
    }
    ifd.extend_from_slice(&0u32.to_le_bytes());
    out[4..8].copy_from_slice(&ifd_at.to_le_bytes());
    out.extend_from_slice(&ifd);
    out.extend_from_slice(&extra);
    out
}

/// An EXR header of `w × h` with `channels` half channels and its offset table, then no
/// pixel data (a few KB claiming `channels` × 2 bytes a pixel).
fn exr_claiming(w: i32, h: i32, channels: usize) -> Vec<u8> {
    let mut out = vec![0x76, 0x2f, 0x31, 0x01, 2, 0, 0, 0];
    let mut attr = |name: &str, kind: &str, value: &[u8]| {
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(kind.as_bytes());
        out.push(0);
        out.extend_from_slice(&(value.len() as i32).to_le_bytes());
        out.extend_from_slice(value);
    };
    let mut names: Vec<String> = (0..channels).map(|k| format!("c{k:03}")).collect();
    names.sort();
    let mut list = Vec::new();
    for n in &names {
        list.extend_from_slice(n.as_bytes());
        list.push(0);
        list.extend_from_slice(&1i32.to_le_bytes());
        list.extend_from_slice(&[0, 0, 0, 0]);
        list.extend_from_slice(&1i32.to_le_bytes());
        list.extend_from_slice(&1i32.to_le_bytes());
    }
    list.push(0);
    attr("channels", "chlist", &list);
    attr("compression", "compression", &[0]);
    let window: Vec<u8> = [0, 0, w - 1, h - 1]
        .iter()
        .flat_map(|v: &i32| v.to_le_bytes())
        .collect();
    attr("dataWindow", "box2i", &window);
    attr("displayWindow", "box2i", &window);
    attr("lineOrder", "lineOrder", &[0]);
    attr("pixelAspectRatio", "float", &1.0f32.to_le_bytes());
    attr("screenWindowCenter", "v2f", &[0; 8]);
    attr("screenWindowWidth", "float", &1.0f32.to_le_bytes());
    out.push(0);
    let table_end = out.len() as u64 + 8 * h as u64;
    for y in 0..h as u64 {
        out.extend_from_slice(&(table_end + y * 8).to_le_bytes());
    }
    out
}

/// A tar entry with any name, type and claimed size, written byte by byte.
fn entry(name: &[u8], kind: tar::EntryType, content: &[u8], claimed: Option<u64>) -> Vec<u8> {
    let mut h = tar::Header::new_ustar();
    let n = name.len().min(100);
    h.as_old_mut().name[..n].copy_from_slice(&name[..n]);
    h.set_size(claimed.unwrap_or(content.len() as u64));
    h.set_mode(0o644);
    h.set_entry_type(kind);
    if kind == tar::EntryType::Symlink || kind == tar::EntryType::Link {
        h.set_link_name("../victim/key").expect("link");
    }
    h.set_cksum();
    let mut out = h.as_bytes().to_vec();
    out.extend_from_slice(content);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn manifest(files: &[(&str, &[u8])], graph: &str) -> Vec<u8> {
    let files: Vec<serde_json::Value> = files
        .iter()
        .map(|(p, b)| {
            serde_json::json!({"path": p, "size": b.len(), "blake3": blake3::hash(b).to_hex().to_string()})
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({"format": "orogen-bundle", "version": 1, "graph": graph, "files": files}))
        .expect("json")
}

/// A bundle of `files` (the first is the main graph), with a correct manifest.
fn bundle(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = entry(
        b"bundle.json",
        tar::EntryType::Regular,
        &manifest(files, files[0].0),
        None,
    );
    for (p, b) in files {
        tar.extend(entry(p.as_bytes(), tar::EntryType::Regular, b, None));
    }
    tar.extend([0u8; 1024]);
    gz(&tar)
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("gz");
    e.finish().expect("gz")
}

// ---------------------------------------------------------------------------------------
// Cases.

/// One attack: how to set it up (in `proj`, with `victim` beside it) and what must happen.
struct Case {
    class: &'static str,
    name: &'static str,
    setup: fn(&Path, &Path) -> Vec<String>,
    /// The exit code, and texts the output must hold.
    code: i32,
    says: &'static [&'static str],
    /// Environment for the run (`OROGEN_CACHE=off` unless set here).
    env: fn(&Path) -> Vec<(String, String)>,
    /// Send SIGINT (Ctrl-C cases) when this holds.
    interrupt: Option<Interrupt>,
    /// A check of the project afterwards.
    after: fn(&Path),
}

/// When a Ctrl-C case sends its signal: `after` the start, and once the process holds
/// `rss_mib` of memory. A threshold ties the signal to the work being under way rather than to a
/// time a faster machine finishes within.
#[derive(Clone, Copy)]
struct Interrupt {
    after: Duration,
    rss_mib: u64,
}

/// The resident memory of process `pid` in MiB (0 when it cannot be read).
fn rss_mib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|t| t.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| (pages * 4096) >> 20)
}

fn no_env(_: &Path) -> Vec<(String, String)> {
    Vec::new()
}

fn nothing(_: &Path) {}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

fn case(
    class: &'static str,
    name: &'static str,
    setup: fn(&Path, &Path) -> Vec<String>,
    code: i32,
    says: &'static [&'static str],
) -> Case {
    Case {
        class,
        name,
        setup,
        code,
        says,
        env: no_env,
        interrupt: None,
        after: nothing,
    }
}

/// Files a case may leave that are not partial outputs.
fn no_partial_files(proj: &Path) {
    for (p, _) in snapshot(proj) {
        let name = p.to_string_lossy();
        assert!(
            !name.contains(".orogen-tmp-") && !name.contains(".orogen-unpack-"),
            "partial file left: {name}"
        );
    }
}

fn journal(out: &Path, text: &str) {
    write(&out.join(".orogen-commit"), text);
}

fn diamond(proj: &Path, levels: usize, doc: usize) {
    for i in 0..levels {
        let g = if i + 1 == levels {
            serde_json::json!({"format": "orogen-graph", "version": 2, "doc": "x".repeat(doc),
                "nodes": [{"id": "c", "type": "constant"}], "outputs": {"height": "c.out"}})
        } else {
            let next = format!("f{}.json", i + 1);
            serde_json::json!({"format": "orogen-graph", "version": 2, "resolution": 32,
                "nodes": [{"id": "a", "type": "subgraph", "graph": next},
                          {"id": "b", "type": "subgraph", "graph": next},
                          {"id": "m", "type": "combine", "inputs": {"a": "a", "b": "b"}}],
                "outputs": {"height": "m.out"}})
        };
        write(&proj.join(format!("f{i}.json")), g.to_string());
    }
}

fn embedded(levels: usize, inner: serde_json::Value) -> serde_json::Value {
    let mut g = inner;
    for _ in 0..levels {
        g = serde_json::json!({"format": "orogen-graph", "version": 2,
            "nodes": [{"id": "s", "type": "subgraph", "graph": "e.json", "embedded": g}],
            "outputs": {"height": "s.out"}});
    }
    g
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        // Folders Orogen writes, read back.
        case(
            "output folder: build journal",
            "journal naming absolute, .. and stolen paths",
            |proj, victim| {
                write(&proj.join("out/payload"), "ATTACKER");
                journal(
                    &proj.join("out"),
                    &format!(
                        "{}\tpayload\n../../victim/b.txt\t\nstolen\t{}\n",
                        victim.join("a.txt").display(),
                        victim.join("key").display()
                    ),
                );
                args(&["build", "g.json"])
            },
            2,
            &[
                "out/.orogen-commit: line 1:",
                "is a path, not a bare file name",
                "nothing was changed",
            ],
        ),
        case(
            "output folder: build journal",
            "journal restoring a planted previous file",
            |proj, _| {
                journal(&proj.join("out"), "height.png\tstolen-key\n");
                args(&["build", "g.json"])
            },
            2,
            &["\"stolen-key\" is not the name of a previous file a build moved aside"],
        ),
        case(
            "output folder: build journal",
            "journal that is a link to a victim file",
            |proj, victim| {
                symlink(&victim.join("a.txt"), &proj.join("out/.orogen-commit"));
                args(&["build", "g.json"])
            },
            2,
            &["is a symbolic link"],
        ),
        case(
            "output folder: build journal",
            "journal that is a FIFO",
            |proj, _| {
                mkfifo(&proj.join("out/.orogen-commit"));
                args(&["build", "g.json"])
            },
            2,
            &["a FIFO (named pipe): only regular files are read"],
        ),
        case(
            "output folder: build journal",
            "journal shipped in a bundle, built after unpack",
            |proj, _| {
                let files: [(&str, &[u8]); 3] = [
                    ("g.json", GRAPH.as_bytes()),
                    ("out/.orogen-commit", b"../../../victim/a.txt\tpayload\n"),
                    ("out/payload", b"ATTACKER"),
                ];
                write(&proj.join("j.orogen"), bundle(&files));
                let ok = Command::new(env!("CARGO_BIN_EXE_orogen"))
                    .args(["unpack", "j.orogen", "-o", "u"])
                    .current_dir(proj)
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "unpack");
                args(&["build", "u/g.json", "-o", "u/out"])
            },
            2,
            &[
                "u/out/.orogen-commit: line 1:",
                "is a path, not a bare file name",
            ],
        ),
        case(
            "output folder: disk cache",
            "cache with links to other folders: build",
            |proj, victim| {
                plant_cache_links(proj, victim);
                args(&[
                    "build",
                    "g.json",
                    "--cache",
                    "cache",
                    "--cache-all",
                    "-o",
                    "out2",
                ])
            },
            0,
            &["out2/manifest.json"],
        ),
        case(
            "output folder: disk cache",
            "cache with links to other folders: trim to 0",
            |proj, victim| {
                plant_cache_links(proj, victim);
                args(&["cache", "trim", "--cache", "cache", "--cache-limit", "0"])
            },
            0,
            &[],
        ),
        case(
            "output folder: disk cache",
            "cache with links to other folders: clear",
            |proj, victim| {
                plant_cache_links(proj, victim);
                args(&["cache", "clear", "--cache", "cache"])
            },
            0,
            &["removed"],
        ),
        case(
            "output folder: plan",
            "plan.json whose key climbs out of the plan folder",
            |proj, _| {
                plan(proj);
                let p = proj.join("plan/plan.json");
                let text = std::fs::read_to_string(&p).expect("plan");
                let v: serde_json::Value = serde_json::from_str(&text).expect("json");
                let key = v["key"].as_str().expect("key").to_owned();
                write(&p, text.replace(&key, "../../../victim"));
                args(&["run-task", "plan", "tile-0"])
            },
            1,
            &["key \"../../../victim\": expected 32 lowercase hexadecimal digits"],
        ),
        case(
            "output folder: plan",
            "tile record listing /dev/zero",
            |proj, _| {
                plan(proj);
                let v: serde_json::Value = serde_json::from_str(
                    &std::fs::read_to_string(proj.join("plan/plan.json")).expect("plan"),
                )
                .expect("json");
                let key = v["key"].as_str().expect("key");
                write(
                    &proj.join(format!("plan/.work/{key}/tile-0.json")),
                    format!(
                        r#"{{"key":"{key}","files":[["/dev/zero","x"]],"range":{{}},"preview":{{}}}}"#
                    ),
                );
                args(&["run-task", "plan", "tile-0"])
            },
            0,
            &[],
        ),
        case(
            "output folder: plan",
            "plan work folder that is a link",
            |proj, victim| {
                plan(proj);
                symlink(victim, &proj.join("plan/.work"));
                args(&["run-task", "plan", "tile-0"])
            },
            1,
            &["is a link, not a folder"],
        ),
        case(
            "output folder: plan",
            "plan grid claiming 4 billion tiles",
            |proj, _| {
                plan(proj);
                let p = proj.join("plan/plan.json");
                let mut v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&p).expect("plan"))
                        .expect("json");
                v["grid"]["tiles_x"] = 65536.into();
                v["grid"]["tiles_y"] = 65536.into();
                write(&p, v.to_string());
                args(&["run-task", "plan", "stitch"])
            },
            1,
            &["not a grid orogen plan makes"],
        ),
        // A bundle's reach.
        case(
            "bundle reach",
            "bundle unpacked below a project marker imports ../../secret",
            |proj, _| {
                write(&proj.join(".orogen-project"), "");
                write(&proj.join("secret.png"), png(4, 4, 8, 0));
                let g = import("../../secret.png");
                write(
                    &proj.join("x/evil.orogen"),
                    bundle(&[("g.json", g.as_bytes())]),
                );
                let ok = Command::new(env!("CARGO_BIN_EXE_orogen"))
                    .args(["unpack", "x/evil.orogen"])
                    .current_dir(proj)
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "unpack");
                args(&["build", "x/evil/g.json", "-o", "x/out"])
            },
            1,
            &["outside the project", "x/evil"],
        ),
        Case {
            env: |proj| vec![("TMPDIR".into(), proj.join("tmp").display().to_string())],
            ..case(
                "bundle reach",
                "bundle built directly with TMPDIR inside a project",
                |proj, _| {
                    write(&proj.join(".orogen-project"), "");
                    write(&proj.join("secret.png"), png(4, 4, 8, 0));
                    std::fs::create_dir_all(proj.join("tmp")).expect("tmp");
                    let g = import("../../secret.png");
                    write(
                        &proj.join("evil.orogen"),
                        bundle(&[("g.json", g.as_bytes())]),
                    );
                    args(&["build", "evil.orogen", "-o", "out"])
                },
                1,
                &["outside the project"],
            )
        },
        // Subgraph expansion.
        case(
            "graph expansion",
            "15 files each using the next twice, 80 KB doc at the bottom",
            |proj, _| {
                diamond(proj, 15, 80_000);
                args(&["build", "f0.json"])
            },
            2,
            &["more than 16 MiB of text"],
        ),
        case(
            "graph expansion",
            "30 embedded levels around a file of 30 more",
            |proj, _| {
                let inner = embedded(
                    30,
                    serde_json::json!({"format": "orogen-graph", "version": 2,
                "nodes": [{"id": "c", "type": "constant"}], "outputs": {"height": "c.out"}}),
                );
                write(&proj.join("e.json"), inner.to_string());
                let mut outer = embedded(
                    29,
                    serde_json::json!({"format": "orogen-graph", "version": 2,
                "nodes": [{"id": "f", "type": "subgraph", "graph": "e.json"}], "outputs": {"height": "f.out"}}),
                );
                outer["resolution"] = 32.into();
                write(&proj.join("g2.json"), outer.to_string());
                args(&["build", "g2.json"])
            },
            2,
            &["nested more than 32 deep"],
        ),
        case(
            "graph expansion",
            "25 files each using the next twice (2²⁴ nodes)",
            |proj, _| {
                diamond(proj, 25, 0);
                args(&["check", "f0.json"])
            },
            2,
            &["more than 100000 nodes"],
        ),
        case(
            "graph expansion",
            "subgraph include cycle",
            |proj, _| {
                write(
                    &proj.join("a.json"),
                    r#"{"format":"orogen-graph","version":2,"nodes":[{"id":"s","type":"subgraph","graph":"b.json"}],"outputs":{"height":"s.out"}}"#,
                );
                write(
                    &proj.join("b.json"),
                    r#"{"format":"orogen-graph","version":2,"nodes":[{"id":"s","type":"subgraph","graph":"a.json"}],"outputs":{"height":"s.out"}}"#,
                );
                args(&["check", "a.json"])
            },
            2,
            &["include cycle"],
        ),
        case(
            "graph expansion",
            "JSON nested 100 000 deep",
            |proj, _| {
                write(
                    &proj.join("deep.json"),
                    format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000)),
                );
                args(&["check", "deep.json"])
            },
            2,
            &["malformed JSON", "recursion limit exceeded"],
        ),
        case(
            "graph expansion",
            "63 MiB JSON array of zeros inside an object",
            |proj, _| {
                let mut s = String::with_capacity(64 << 20);
                s.push_str("{\"a\":[");
                for _ in 0..(31 << 20) {
                    s.push_str("0,");
                }
                s.push_str("0]}");
                write(&proj.join("zeros.json"), s);
                args(&["check", "zeros.json"])
            },
            2,
            &["more than 4000000 values"],
        ),
        case(
            "graph expansion",
            "63 MiB JSON array at the top level",
            |proj, _| {
                let mut s = String::with_capacity(64 << 20);
                s.push('[');
                for _ in 0..(31 << 20) {
                    s.push_str("0,");
                }
                s.push_str("0]");
                write(&proj.join("zeros.json"), s);
                args(&["check", "zeros.json"])
            },
            2,
            &["expected a JSON object at the top level, found an array"],
        ),
        // Decoders.
        case(
            "decoders",
            "PNG header claiming 16384² RGBA16, --max-memory 512M",
            |proj, _| {
                write(&proj.join("big.png"), png(16384, 16384, 16, 6));
                write(&proj.join("i.json"), import("big.png"));
                args(&["build", "i.json", "--max-memory", "512M"])
            },
            2,
            &["decoding its imports holds 3.0 GiB", "node \"dem\""],
        ),
        case(
            "decoders",
            "PNG header claiming 100000²",
            |proj, _| {
                write(&proj.join("big.png"), png(100_000, 100_000, 16, 0));
                write(&proj.join("i.json"), import("big.png"));
                args(&["build", "i.json"])
            },
            1,
            &["the image is 100000 × 100000 pixels"],
        ),
        case(
            "decoders",
            "EXR header of 4096² with 128 channels, no pixels",
            |proj, _| {
                write(&proj.join("big.exr"), exr_claiming(4096, 4096, 128));
                write(&proj.join("i.json"), import("big.exr"));
                args(&["build", "i.json", "--max-memory", "512M"])
            },
            1,
            &["node \"dem\""],
        ),
        case(
            "decoders",
            "float64 GeoTIFF of 16384² in 25 KB, --max-memory 512M",
            |proj, _| {
                write(&proj.join("dem.tif"), tiff_f64(16384, 16384, false, None));
                write(&proj.join("i.json"), import("dem.tif"));
                args(&["build", "i.json", "--max-memory", "512M"])
            },
            2,
            &[
                "decoding its imports holds",
                "more than the limit of 512.0 MiB",
            ],
        ),
        case(
            "decoders",
            "float64 GeoTIFF of 4096² with a NaN cell (accepted)",
            |proj, _| {
                write(&proj.join("dem.tif"), tiff_f64(4096, 4096, true, None));
                write(&proj.join("i.json"), import("dem.tif"));
                args(&["build", "i.json", "--max-memory", "512M", "-o", "out2"])
            },
            0,
            &["out2/manifest.json"],
        ),
        // Bundles.
        case(
            "bundles",
            "manifest listing 300 000 paths",
            |proj, _| {
                let files: Vec<serde_json::Value> = (0..300_000)
                    .map(
                        |k| serde_json::json!({"path": format!("f{k}"), "size": 0, "blake3": "00"}),
                    )
                    .collect();
                let m = serde_json::to_vec(&serde_json::json!({"format": "orogen-bundle", "version": 1, "graph": "f0", "files": files})).expect("json");
                let mut tar = entry(b"bundle.json", tar::EntryType::Regular, &m, None);
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["lists 300000 files, more than the 10000"],
        ),
        case(
            "bundles",
            "manifest listing a 4 GiB image",
            |proj, _| {
                let m = serde_json::to_vec(&serde_json::json!({"format": "orogen-bundle", "version": 1, "graph": "g.json",
                "files": [{"path": "g.json", "size": 2, "blake3": "00"}, {"path": "big.png", "size": 4u64 << 30, "blake3": "00"}]})).expect("json");
                let mut tar = entry(b"bundle.json", tar::EntryType::Regular, &m, None);
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["\"big.png\" is 4294967296 bytes, more than the 2 GiB"],
        ),
        case(
            "bundles",
            "256 MiB of zeros whose hash does not match",
            |proj, _| {
                let zeros = vec![0u8; 256 << 20];
                let mut m: serde_json::Value = serde_json::from_slice(&manifest(
                    &[("g.json", GRAPH.as_bytes()), ("z.png", &zeros[..1])],
                    "g.json",
                ))
                .expect("json");
                m["files"][1]["size"] = (256u64 << 20).into();
                let m = serde_json::to_vec(&m).expect("json");
                let mut tar = entry(b"bundle.json", tar::EntryType::Regular, &m, None);
                tar.extend(entry(
                    b"g.json",
                    tar::EntryType::Regular,
                    GRAPH.as_bytes(),
                    None,
                ));
                tar.extend(entry(b"z.png", tar::EntryType::Regular, &zeros, None));
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["entry \"z.png\": its content does not match the hash"],
        ),
        Case {
            after: |proj| {
                assert!(
                    !proj.join("u/g.json").exists(),
                    "unpack wrote a file before refusing"
                );
            },
            ..case(
                "bundles",
                "unpack into a folder holding a different lib/z.json",
                |proj, _| {
                    let files: [(&str, &[u8]); 2] =
                        [("g.json", GRAPH.as_bytes()), ("lib/z.json", b"{}")];
                    write(&proj.join("b.orogen"), bundle(&files));
                    write(&proj.join("u/lib/z.json"), "mine");
                    args(&["unpack", "b.orogen", "-o", "u"])
                },
                2,
                &[
                    "u/lib/z.json exists with other content",
                    "nothing was written",
                ],
            )
        },
        case(
            "bundles",
            "FIFO named x.orogen",
            |proj, _| {
                mkfifo(&proj.join("x.orogen"));
                args(&["unpack", "x.orogen"])
            },
            2,
            &["a FIFO (named pipe): only regular files are read"],
        ),
        case(
            "bundles",
            "64 MiB GNU long-name entry",
            |proj, _| {
                let mut tar = entry(
                    b"././@LongLink",
                    tar::EntryType::GNULongName,
                    &vec![b'a'; 64 << 20],
                    None,
                );
                tar.extend(entry(b"x", tar::EntryType::Regular, b"", None));
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["more than its bundle.json lists"],
        ),
        case(
            "bundles",
            "entry ../victim/key (zip-slip)",
            |proj, _| {
                let mut tar = entry(
                    b"bundle.json",
                    tar::EntryType::Regular,
                    &manifest(&[("g.json", GRAPH.as_bytes())], "g.json"),
                    None,
                );
                tar.extend(entry(
                    b"../victim/key",
                    tar::EntryType::Regular,
                    b"OWNED",
                    None,
                ));
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["a bundle may only hold paths inside its folder"],
        ),
        case(
            "bundles",
            "symbolic link entry",
            |proj, _| {
                let mut tar = entry(
                    b"bundle.json",
                    tar::EntryType::Regular,
                    &manifest(&[("g.json", GRAPH.as_bytes())], "g.json"),
                    None,
                );
                tar.extend(entry(b"g.json", tar::EntryType::Symlink, b"", None));
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["only regular files may be in a bundle (found Symlink)"],
        ),
        case(
            "bundles",
            "hard link entry",
            |proj, _| {
                let mut tar = entry(
                    b"bundle.json",
                    tar::EntryType::Regular,
                    &manifest(&[("g.json", GRAPH.as_bytes())], "g.json"),
                    None,
                );
                tar.extend(entry(b"g.json", tar::EntryType::Link, b"", None));
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["only regular files may be in a bundle (found Link)"],
        ),
        case(
            "bundles",
            "character device entry",
            |proj, _| {
                let mut tar = entry(
                    b"bundle.json",
                    tar::EntryType::Regular,
                    &manifest(&[("g.json", GRAPH.as_bytes())], "g.json"),
                    None,
                );
                tar.extend(entry(b"g.json", tar::EntryType::Char, b"", None));
                tar.extend([0u8; 1024]);
                write(&proj.join("b.orogen"), gz(&tar));
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            2,
            &["only regular files may be in a bundle (found Char)"],
        ),
        case(
            "bundles",
            "pack streams a 300 MiB import (accepted)",
            |proj, _| {
                sparse(&proj.join("big.png"), 300 << 20);
                write(&proj.join("i.json"), import("big.png"));
                args(&["pack", "i.json", "-o", "i.orogen"])
            },
            0,
            &["big.png (314572800 bytes)"],
        ),
        // Flags.
        case(
            "flags",
            "plan --size 65536 --tile-size 1",
            |_, _| {
                args(&[
                    "plan",
                    "g.json",
                    "--size",
                    "65536",
                    "--tile-size",
                    "1",
                    "-o",
                    "p",
                ])
            },
            2,
            &["expected at most 65536 tiles"],
        ),
        case(
            "flags",
            "build --size 65536 --tile-size 1",
            |_, _| {
                args(&[
                    "build",
                    "g.json",
                    "--size",
                    "65536",
                    "--tile-size",
                    "1",
                    "-o",
                    "out3",
                ])
            },
            2,
            &["expected at most 65536 tiles"],
        ),
        case(
            "flags",
            "stats --bins 1000000000",
            |_, _| args(&["stats", "g.json", "--bins", "1000000000"]),
            2,
            &["1000000000 is not in 1..=65536"],
        ),
        case(
            "flags",
            "build --size 1000000",
            |_, _| args(&["build", "g.json", "--size", "1000000"]),
            2,
            &["--size 1000000: expected a resolution in [2, 65536]"],
        ),
        case(
            "flags",
            "new --from-dem with a 1e300 m cell",
            |proj, _| {
                write(&proj.join("dem.tif"), tiff_f64(16, 16, false, Some(1e300)));
                args(&["new", "--from-dem", "dem.tif", "-o", "new.json"])
            },
            2,
            &["this DEM does not make a valid graph, nothing was written"],
        ),
        case(
            "flags",
            "world of 1e30 m",
            |proj, _| {
                write(
                    &proj.join("w.json"),
                    r#"{"format":"orogen-graph","version":2,"world":{"size_m":1e30},"nodes":[{"id":"c","type":"constant"}],"outputs":{"height":"c.out"}}"#,
                );
                args(&["check", "w.json"])
            },
            2,
            &["world.size_m"],
        ),
        case(
            "flags",
            "node id with a terminal escape sequence",
            |proj, _| {
                write(&proj.join("e.json"), "{\"format\":\"orogen-graph\",\"version\":2,\"nodes\":[{\"id\":\"x\\u001b[31mRED\",\"type\":\"constant\"}],\"outputs\":{\"height\":\"c.out\"}}");
                args(&["check", "e.json"])
            },
            2,
            &["x\\u{1b}[31mRED"],
        ),
        // References (the first round).
        case(
            "references",
            "import ../victim/a.txt",
            |proj, _| {
                write(&proj.join("i.json"), import("../victim/a.txt"));
                args(&["build", "i.json"])
            },
            1,
            &["outside the project"],
        ),
        case(
            "references",
            "import an absolute path",
            |proj, _| {
                write(&proj.join("i.json"), import("/etc/hostname"));
                args(&["build", "i.json"])
            },
            1,
            &["outside the project"],
        ),
        case(
            "references",
            "import through a symlink out of the project",
            |proj, victim| {
                symlink(&victim.join("a.txt"), &proj.join("link.png"));
                write(&proj.join("i.json"), import("link.png"));
                args(&["build", "i.json"])
            },
            1,
            &["outside the project"],
        ),
        case(
            "references",
            "import a FIFO",
            |proj, _| {
                mkfifo(&proj.join("f.png"));
                write(&proj.join("i.json"), import("f.png"));
                args(&["build", "i.json"])
            },
            1,
            &["a FIFO (named pipe)"],
        ),
        case(
            "references",
            "import /dev/zero with --allow-outside /dev",
            |proj, _| {
                write(&proj.join("i.json"), import("/dev/zero"));
                args(&["build", "i.json", "--allow-outside", "/dev"])
            },
            1,
            &["a character device"],
        ),
        case(
            "references",
            "import /proc/self/environ",
            |proj, _| {
                write(&proj.join("i.json"), import("/proc/self/environ"));
                args(&["build", "i.json"])
            },
            1,
            &["outside the project"],
        ),
        case(
            "references",
            "import a path with a NUL byte",
            |proj, _| {
                write(&proj.join("i.json"), import("a\u{0}b.png"));
                args(&["build", "i.json"])
            },
            1,
            &["node \"dem\""],
        ),
    ];
    // Ctrl-C: exit 130 within 1 s of the signal, nothing partial left.
    // The signal goes once the decode holds 96 MiB of its 512: on any machine it arrives while
    // the decode is under way (an earlier fixed 400 ms let a fast CI machine finish first).
    v.push(Case {
        interrupt: Some(Interrupt {
            after: Duration::ZERO,
            rss_mib: 96,
        }),
        after: no_partial_files,
        ..case(
            "Ctrl-C",
            "during a GeoTIFF decode (8192² float64)",
            |proj, _| {
                write(&proj.join("dem.tif"), tiff_f64(8192, 8192, false, None));
                write(&proj.join("i.json"), import("dem.tif"));
                args(&["build", "i.json"])
            },
            130,
            &["cancelled"],
        )
    });
    v.push(Case {
        interrupt: Some(Interrupt {
            after: Duration::from_millis(300),
            rss_mib: 0,
        }),
        after: |proj| {
            no_partial_files(proj);
            assert!(!proj.join("i.orogen").exists(), "a partial bundle was left");
        },
        ..case("Ctrl-C", "during pack of a 4 GiB import", |proj, _| {
            sparse(&proj.join("big.png"), 2000 << 20);
            sparse(&proj.join("big2.png"), 2000 << 20);
            write(&proj.join("i.json"), r#"{"format":"orogen-graph","version":2,"nodes":[{"id":"a","type":"import","params":{"path":"big.png"}},{"id":"b","type":"import","params":{"path":"big2.png"}}],"outputs":{"h":"a.out","i":"b.out"}}"#);
            args(&["pack", "i.json", "-o", "i.orogen"])
        }, 130, &["cancelled"])
    });
    v.push(Case {
        interrupt: Some(Interrupt {
            after: Duration::from_millis(300),
            rss_mib: 0,
        }),
        after: |proj| {
            no_partial_files(proj);
            assert!(!proj.join("u").exists(), "a partial unpack was left");
        },
        ..case(
            "Ctrl-C",
            "during unpack of 1 GiB",
            |proj, _| {
                zeros_bundle(&proj.join("b.orogen"), 1 << 30);
                args(&["unpack", "b.orogen", "-o", "u"])
            },
            130,
            &["cancelled"],
        )
    });
    v
}

/// A bundle of a graph and `len` zero bytes as `z.png`, streamed to `path`.
fn zeros_bundle(path: &Path, len: u64) {
    let chunk = vec![0u8; 1 << 20];
    let mut h = blake3::Hasher::new();
    for _ in 0..len >> 20 {
        h.update(&chunk);
    }
    let files = serde_json::json!([
        {"path": "g.json", "size": GRAPH.len(), "blake3": blake3::hash(GRAPH.as_bytes()).to_hex().to_string()},
        {"path": "z.png", "size": len, "blake3": h.finalize().to_hex().to_string()}]);
    let m = serde_json::to_vec(&serde_json::json!({"format": "orogen-bundle", "version": 1, "graph": "g.json", "files": files})).expect("json");
    let f = std::fs::File::create(path).expect("create");
    let mut gz =
        flate2::write::GzEncoder::new(std::io::BufWriter::new(f), flate2::Compression::fast());
    gz.write_all(&entry(b"bundle.json", tar::EntryType::Regular, &m, None))
        .expect("write");
    gz.write_all(&entry(
        b"g.json",
        tar::EntryType::Regular,
        GRAPH.as_bytes(),
        None,
    ))
    .expect("write");
    let mut head = entry(b"z.png", tar::EntryType::Regular, b"", Some(len));
    head.truncate(512);
    gz.write_all(&head).expect("write");
    for _ in 0..len >> 20 {
        gz.write_all(&chunk).expect("write");
    }
    gz.write_all(&[0u8; 1024]).expect("write");
    gz.finish().expect("gz").flush().expect("flush");
}

/// A cache folder whose version, fan-out and records folders are links to the victim.
fn plant_cache_links(proj: &Path, victim: &Path) {
    let cache = proj.join("cache");
    std::fs::create_dir_all(cache.join("v1")).expect("cache");
    symlink(victim, &cache.join("v1/ab"));
    symlink(victim, &cache.join("v0"));
    symlink(victim, &cache.join("builds"));
}

/// `orogen plan g.json` into `proj/plan` (2×2 tiles of 64²).
fn plan(proj: &Path) {
    let ok = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .args([
            "plan", "g.json", "--size", "64", "--tiles", "2x2", "-o", "plan",
        ])
        .current_dir(proj)
        .env("OROGEN_CACHE", "off")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "plan");
}

/// What one run did.
struct Run {
    code: Option<i32>,
    text: String,
    took: Duration,
    /// From the signal to the exit, for Ctrl-C cases.
    after_signal: Option<Duration>,
    peak_kib: Option<u64>,
}

fn run(dir: &Path, c: &Case, args: &[String]) -> Run {
    let time = Path::new("/usr/bin/time");
    let rss = dir.join("..").join(".rss");
    let measured = time.exists();
    assert!(
        measured || std::env::var_os("CI").is_none(),
        "/usr/bin/time is missing (Debian package `time`): CI must measure peak memory"
    );
    let mut cmd = if measured {
        let mut cmd = Command::new(time);
        cmd.arg("-f").arg("%M").arg("-o").arg(&rss);
        cmd.arg(env!("CARGO_BIN_EXE_orogen"));
        cmd
    } else {
        Command::new(env!("CARGO_BIN_EXE_orogen"))
    };
    cmd.env("OROGEN_CACHE", "off");
    for (k, v) in (c.env)(dir) {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut signalled = None;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if let (Some(when), None) = (c.interrupt, signalled) {
            // GNU time ignores SIGINT while its command runs: the signal goes to orogen
            // itself, as a terminal's Ctrl-C would.
            let pid = child.id();
            let target = if measured {
                std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                    .ok()
                    .and_then(|t| t.split_whitespace().next().map(str::to_owned))
            } else {
                Some(pid.to_string())
            };
            if let Some(target) =
                target.filter(|t| start.elapsed() >= when.after && rss_mib(t) >= when.rss_mib)
            {
                // A process that ended meanwhile fails the exit-code check below.
                let _ = Command::new("kill").args(["-INT", &target]).status();
                signalled = Some(Instant::now());
            }
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{}: orogen {args:?} still running after 20 s", c.name);
        }
        let waiting = c.interrupt.is_some() && signalled.is_none();
        std::thread::sleep(Duration::from_millis(if waiting { 1 } else { 5 }));
    };
    let took = start.elapsed();
    let after_signal = signalled.map(|s| s.elapsed());
    let out = child.wait_with_output().expect("output");
    let peak_kib = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()));
    let _ = std::fs::remove_file(&rss);
    // Under GNU time a child killed by a signal is reported as its own status.
    let code = status.code().or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        status.signal().map(|s| 128 + s)
    });
    Run {
        code,
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        took,
        after_signal,
        peak_kib,
    }
}

#[test]
fn every_hostile_input_is_refused_quickly_in_bounded_memory_touching_nothing_outside() {
    let root = std::env::temp_dir().join(format!("orogen-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("root");
    let root = std::fs::canonicalize(&root).expect("canonical");
    // The previous build every case's output folder holds.
    let template = root.join("template");
    write(&template.join("g.json"), GRAPH);
    let ok = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .args(["build", "g.json", "-o", "out"])
        .current_dir(&template)
        .env("OROGEN_CACHE", "off")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "template build");
    let previous = snapshot(&template.join("out"));
    let only = std::env::var("OROGEN_HOSTILE_CASE").ok();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (k, c) in cases().iter().enumerate() {
        if only.as_deref().is_some_and(|o| !c.name.contains(o)) {
            continue;
        }
        let dir = root.join(format!("case{k}"));
        let (victim, proj) = (dir.join("victim"), dir.join("proj"));
        write(&victim.join("a.txt"), "ORIGINAL");
        write(&victim.join("b.txt"), "KEEP");
        write(&victim.join("key"), "SECRET");
        write(&victim.join("sub/c.bin"), "NESTED");
        write(&proj.join("g.json"), GRAPH);
        for (rel, bytes) in &previous {
            if bytes != b"<dir>" {
                write(&proj.join("out").join(rel), bytes);
            }
        }
        let args = (c.setup)(&proj, &victim);
        let victim_before = snapshot(&victim);
        let r = run(&proj, c, &args);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_eq!(r.code, Some(c.code), "exit code; output:\n{}", r.text);
            for s in c.says {
                assert!(r.text.contains(s), "expected {s:?} in:\n{}", r.text);
            }
            assert!(
                !r.text.contains('\u{1b}'),
                "a raw escape reached the terminal"
            );
            if let Some(after) = r.after_signal {
                assert!(
                    after < Duration::from_secs(1),
                    "exited {after:?} after Ctrl-C"
                );
            } else {
                assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
            }
            if let Some(kib) = r.peak_kib {
                assert!(kib < 512 * 1024, "peak {kib} KiB");
            }
            assert_eq!(
                snapshot(&victim),
                victim_before,
                "the victim folder changed"
            );
            let out = snapshot(&proj.join("out"));
            let kept: BTreeMap<_, _> = out
                .into_iter()
                .filter(|(p, _)| previous.contains_key(p))
                .collect();
            assert_eq!(kept, previous, "the previous build in out/ changed");
            (c.after)(&proj);
        }));
        let peak = r.peak_kib.map_or_else(
            || "—".to_owned(),
            |k| format!("{:.0} MiB", k as f64 / 1024.0),
        );
        let time = r.after_signal.map_or_else(
            || format!("{:.2} s", r.took.as_secs_f64()),
            |a| format!("{:.2} s after Ctrl-C", a.as_secs_f64()),
        );
        rows.push(format!(
            "| {} | {} | {} | {time} | {peak} |",
            c.class,
            c.name,
            r.code
                .map_or_else(|| "signal".to_owned(), |c| c.to_string())
        ));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{}: {msg}", c.name));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("| class | case | exit | time | peak memory |\n|---|---|---|---|---|");
    for r in &rows {
        println!("{r}");
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
