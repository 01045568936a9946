//! Files from strangers (docs/security.md): what a graph file's references may make Orogen
//! read. Every hostile reference ends in a clean refusal naming the node and the path, within
//! 5 s and (where `/usr/bin/time` can measure it) under 512 MiB peak memory.

use crate::common;

use common::repo;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("orogen-refs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::canonicalize(&d).expect("canonical")
}

fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).expect("dir");
    }
    std::fs::write(path, text).expect("write");
}

/// A graph with the given nodes (JSON) and outputs.
fn graph(nodes: &str, outputs: &str) -> String {
    format!(
        r#"{{"format": "orogen-graph", "version": 2, "resolution": 64, "nodes": [{nodes}], "outputs": {{{outputs}}}}}"#
    )
}

/// A graph whose output is an `import` node "dem" reading `path`.
fn import(path: &str) -> String {
    graph(
        &format!(r#"{{"id": "dem", "type": "import", "params": {{"path": "{path}"}}}}"#),
        r#""h": "dem.out""#,
    )
}

/// What one run did: exit code, output text, wall time, peak memory (KiB) when measurable.
struct Run {
    code: Option<i32>,
    text: String,
    took: Duration,
    peak_kib: Option<u64>,
}

/// Runs `orogen ARGS` in `dir`, killing it after 5 s, under `/usr/bin/time` when there is one.
fn run(dir: &Path, args: &[&str]) -> Run {
    let time = Path::new("/usr/bin/time");
    let rss = dir.join(".rss");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-f").arg("%M").arg("-o").arg(&rss);
        c.arg(env!("CARGO_BIN_EXE_orogen"));
        c.env("OROGEN_CACHE", "off");
        c
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "/usr/bin/time is missing (Debian package `time`): CI must measure peak memory"
        );
        let mut c = Command::new(env!("CARGO_BIN_EXE_orogen"));
        c.env("OROGEN_CACHE", "off");
        c
    };
    let start = Instant::now();
    let mut child = cmd
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let out: Output = loop {
        if child.try_wait().expect("wait").is_some() {
            break child.wait_with_output().expect("output");
        }
        if start.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "orogen {args:?} still running after 5 s: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = start.elapsed();
    let peak_kib = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()));
    let _ = std::fs::remove_file(&rss);
    Run {
        code: out.status.code(),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        took,
        peak_kib,
    }
}

/// The run was refused with `code`, quickly and within the memory bound, saying `says`.
fn refused(r: &Run, code: i32, says: &[&str]) {
    assert_eq!(r.code, Some(code), "{}", r.text);
    for s in says {
        assert!(r.text.contains(s), "expected {s:?} in:\n{}", r.text);
    }
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    if let Some(kib) = r.peak_kib {
        assert!(kib < 512 * 1024, "peak {kib} KiB");
    }
    println!("{:?} {:?} KiB: {}", r.took, r.peak_kib, r.text.trim());
}

#[test]
fn an_import_outside_the_project_is_refused_by_pack_build_and_naming_the_node() {
    let dir = temp("outside");
    let proj = dir.join("proj");
    // An unwired scratch node: pack must still refuse it, not ship /etc/hostname.
    write(
        &proj.join("g.json"),
        &graph(
            r#"{"id": "scratch", "type": "import", "params": {"path": "../../../../../../../../etc/hostname"}},
               {"id": "c", "type": "constant"}"#,
            r#""h": "c.out""#,
        ),
    );
    let r = run(&proj, &["pack", "g.json", "-o", "b.orogen"]);
    refused(
        &r,
        2,
        &[
            "node \"scratch\": params.path: \"../../../../../../../../etc/hostname\" resolves to /etc/hostname, outside the project",
            &proj.display().to_string(),
        ],
    );
    assert!(!proj.join("b.orogen").exists());
    // Wired to an output: the build refuses that output (the graph still loads: a document).
    write(
        &proj.join("w.json"),
        &import("../../../../../../../../etc/hostname"),
    );
    let r = run(&proj, &["build", "w.json", "-o", "out"]);
    refused(
        &r,
        1,
        &["node \"dem\": params.path:", "--allow-outside /etc"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(target_os = "linux")]
#[test]
fn devices_are_refused_before_reading_even_when_allowed() {
    let dir = temp("devices");
    write(&dir.join("z.json"), &import("/dev/zero"));
    let r = run(&dir, &["build", "z.json", "-o", "out"]);
    refused(&r, 1, &["node \"dem\"", "/dev/zero", "outside the project"]);
    let r = run(
        &dir,
        &["build", "z.json", "-o", "out", "--allow-outside", "/dev"],
    );
    refused(
        &r,
        1,
        &["node \"dem\": /dev/zero is a character device: only regular files are read"],
    );
    for dev in ["zero", "urandom"] {
        let name = format!("s_{dev}.json");
        write(
            &dir.join(&name),
            &graph(
                &format!(
                    r#"{{"id": "sub", "type": "subgraph", "graph": "../../../../../../../../dev/{dev}"}}"#
                ),
                "",
            ),
        );
        let r = run(&dir, &["check", &name]);
        refused(
            &r,
            2,
            &[&format!("node \"sub\": graph: subgraph file \"../../../../../../../../dev/{dev}\" resolves to /dev/{dev}, outside the project")],
        );
        let r = run(&dir, &["check", &name, "--allow-outside", "/dev"]);
        refused(&r, 2, &[&format!("/dev/{dev} is a character device")]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn fifos_folders_and_symlinks_out_of_the_project_are_refused() {
    let dir = temp("fifo");
    let proj = dir.join("proj");
    std::fs::create_dir_all(&proj).expect("dir");
    // A FIFO nobody writes to: opening it to read would block forever.
    let made = Command::new("mkfifo")
        .arg(proj.join("pipe.png"))
        .status()
        .is_ok_and(|s| s.success());
    if made {
        write(&proj.join("f.json"), &import("pipe.png"));
        let r = run(&proj, &["build", "f.json", "-o", "out"]);
        refused(
            &r,
            1,
            &["is a FIFO (named pipe): only regular files are read"],
        );
        write(
            &proj.join("fs.json"),
            &graph(
                r#"{"id": "sub", "type": "subgraph", "graph": "pipe.png"}"#,
                "",
            ),
        );
        let r = run(&proj, &["check", "fs.json"]);
        refused(&r, 2, &["node \"sub\"", "is a FIFO (named pipe)"]);
    } else {
        assert!(std::env::var_os("CI").is_none(), "mkfifo failed");
    }
    // A folder named like a graph.
    std::fs::create_dir_all(proj.join("lib.json")).expect("dir");
    write(
        &proj.join("d.json"),
        &graph(
            r#"{"id": "sub", "type": "subgraph", "graph": "lib.json"}"#,
            "",
        ),
    );
    refused(&run(&proj, &["check", "d.json"]), 2, &["is a folder"]);
    // A symlink inside the project pointing out of it is judged by where it points.
    write(
        &dir.join("outside/sub.json"),
        &graph(r#"{"id": "c", "type": "constant"}"#, r#""out": "c.out""#),
    );
    std::os::unix::fs::symlink(dir.join("outside/sub.json"), proj.join("link.json"))
        .expect("symlink");
    write(
        &proj.join("l.json"),
        &graph(
            r#"{"id": "sub", "type": "subgraph", "graph": "link.json"}"#,
            r#""h": "sub.out""#,
        ),
    );
    let r = run(&proj, &["check", "l.json"]);
    refused(
        &r,
        2,
        &[&format!(
            "node \"sub\": graph: subgraph file \"link.json\" resolves to {}, outside the project {}",
            dir.join("outside/sub.json").display(),
            proj.display()
        )],
    );
    // The opt-in lets it through, and only it.
    let outside = dir.join("outside").display().to_string();
    let r = run(&proj, &["check", "l.json", "--allow-outside", &outside]);
    assert_eq!(r.code, Some(0), "{}", r.text);
    // A project marker above widens the project to its folder.
    std::fs::write(dir.join(".orogen-project"), "").expect("marker");
    let r = run(&proj, &["check", "l.json"]);
    assert_eq!(r.code, Some(0), "{}", r.text);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn huge_files_are_refused_by_their_size_before_reading() {
    let dir = temp("huge");
    // Sparse: no disk is used.
    let f = std::fs::File::create(dir.join("huge.json")).expect("create");
    f.set_len(65 << 20).expect("len");
    let r = run(&dir, &["check", "huge.json"]);
    refused(
        &r,
        2,
        &["huge.json is 68157440 bytes, more than the 64 MiB this kind of file may have"],
    );
    let f = std::fs::File::create(dir.join("huge.png")).expect("create");
    f.set_len(3 << 30).expect("len");
    write(&dir.join("i.json"), &import("huge.png"));
    let r = run(&dir, &["build", "i.json", "-o", "out"]);
    refused(
        &r,
        1,
        &["node \"dem\"", "is 3221225472 bytes, more than the 2 GiB"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A PNG whose header claims `w × h` 16-bit grey pixels, with one tiny compressed row.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
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
    ihdr.extend_from_slice(&[16, 0, 0, 0, 0]);
    chunk(&mut out, *b"IHDR", &ihdr);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![0u8; 1 << 16]).expect("deflate");
    chunk(&mut out, *b"IDAT", &z.finish().expect("deflate"));
    chunk(&mut out, *b"IEND", &[]);
    out
}

#[test]
fn a_decompression_bomb_png_is_refused_from_its_header() {
    let dir = temp("bomb");
    std::fs::write(dir.join("bomb.png"), png_claiming(100_000, 100_000)).expect("png");
    write(&dir.join("b.json"), &import("bomb.png"));
    let r = run(&dir, &["build", "b.json", "-o", "out"]);
    refused(
        &r,
        1,
        &[
            "node \"dem\"",
            "the image is 100000 × 100000 pixels; Orogen imports at most 268435456 pixels (16384²)",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` subgraph files `f0 … f{n-1}`, each using the next `uses` times; the last a constant.
fn nested(dir: &Path, n: usize, uses: usize) {
    for k in 0..n {
        let text = if k + 1 < n {
            let nodes: Vec<String> = (0..uses)
                .map(|u| {
                    format!(
                        r#"{{"id": "u{u}", "type": "subgraph", "graph": "f{}.json"}}"#,
                        k + 1
                    )
                })
                .collect();
            graph(&nodes.join(","), r#""out": "u0.out""#)
        } else {
            graph(r#"{"id": "c", "type": "constant"}"#, r#""out": "c.out""#)
        };
        write(&dir.join(format!("f{k}.json")), &text);
    }
}

#[test]
fn exponential_subgraph_expansion_is_refused_where_it_crosses_the_limit() {
    let dir = temp("laughs");
    // 25 files each using the next twice: 2^24 leaves once expanded. Whichever bound it
    // crosses first — the nodes, or the bytes of the copy with every use embedded (here the
    // bytes, at 2^16 uses of small files) — it is refused where it crosses it.
    nested(&dir, 25, 2);
    let r = run(&dir, &["check", "f0.json"]);
    refused(
        &r,
        2,
        &["with its subgraphs embedded this graph is more than 16 MiB of text (a build copy holds every use of a subgraph): Orogen refuses graphs that large"],
    );
    // Each file's failure is said once, not once per use.
    assert!(r.text.len() < 8192, "{} bytes of messages", r.text.len());
    let r = run(&dir, &["build", "f0.json", "-o", "out"]);
    refused(&r, 2, &["Orogen refuses graphs that large"]);
    // Files of many nodes cross the node bound first.
    let wide = temp("laughs-wide");
    nested(&wide, 3, 400);
    let r = run(&wide, &["check", "f0.json"]);
    refused(
        &r,
        2,
        &["has more than 100000 nodes: Orogen refuses graphs that large"],
    );
    let _ = std::fs::remove_dir_all(&wide);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deep_chains_load_in_linear_time_and_too_deep_ones_are_refused() {
    let dir = temp("chain");
    nested(&dir.join("ok"), 32, 1);
    let r = run(&dir.join("ok"), &["check", "f0.json"]);
    assert_eq!(r.code, Some(0), "{}", r.text);
    assert!(
        r.took < Duration::from_secs(1),
        "32 levels took {:?}",
        r.took
    );
    // The build copy embeds all 32 levels and reads back.
    let r = run(
        &dir.join("ok"),
        &["build", "f0.json", "-o", "out", "--size", "8"],
    );
    assert_eq!(r.code, Some(0), "{}", r.text);
    let r = run(&dir.join("ok"), &["check", "out/graph.json"]);
    assert_eq!(r.code, Some(0), "{}", r.text);
    nested(&dir.join("deep"), 200, 1);
    let r = run(&dir.join("deep"), &["check", "f0.json"]);
    refused(
        &r,
        2,
        &["subgraphs nested more than 32 deep: f0.json → f1.json → f2.json → … (27 more) … → f30.json → f31.json → f32.json"],
    );
    assert!(r.took < Duration::from_secs(1), "took {:?}", r.took);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bundle_whose_graph_reaches_outside_is_refused_after_unpacking() {
    let dir = temp("bundle");
    let g = graph(
        r#"{"id": "dem", "type": "import", "params": {"path": "../../../../../../../../etc/hostname"}}"#,
        r#""h": "dem.out""#,
    );
    let manifest = format!(
        r#"{{"format": "orogen-bundle", "version": 1, "graph": "g.json", "files": [{{"path": "g.json", "size": {}, "blake3": "{}"}}]}}"#,
        g.len(),
        blake3::hash(g.as_bytes()).to_hex()
    );
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (name, bytes) in [
        ("bundle.json", manifest.as_bytes()),
        ("g.json", g.as_bytes()),
    ] {
        let mut h = tar::Header::new_ustar();
        h.set_path(name).expect("path");
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append(&h, bytes).expect("append");
    }
    let bytes = tar
        .into_inner()
        .and_then(flate2::write::GzEncoder::finish)
        .expect("finish");
    std::fs::write(dir.join("b.orogen"), bytes).expect("bundle");
    let r = run(&dir, &["build", "b.orogen", "-o", "out"]);
    refused(
        &r,
        1,
        &[
            "node \"dem\"",
            "resolves to /etc/hostname, outside the project",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn packing_the_example_lists_only_paths_below_its_folder_and_why() {
    let dir = temp("pack");
    let out = dir.join("coast.orogen");
    let o = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .arg("pack")
        .arg(repo().join("graphs/coast_range.json"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}");
    let listed: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("  ")).collect();
    assert_eq!(listed.len(), 4, "{text}");
    assert!(listed[0].starts_with("coast_range.json (") && listed[0].ends_with("the main graph"));
    assert!(
        listed[1].starts_with("lib/coastline.json (")
            && listed[1].contains("subgraph of node \"coast\" in"),
        "{text}"
    );
    let m = orogen::document::bundle::verify(&out, None).expect("verify");
    for f in &m.files {
        assert!(
            !f.path.contains("..") && !f.path.starts_with("graphs"),
            "{}",
            f.path
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
