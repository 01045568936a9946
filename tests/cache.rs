//! The disk cache across processes: a late edit recomputes only the edited node and what it
//! feeds (counted in the manifests of two `orogen build` processes, and said by `--explain`);
//! outputs are the same bytes cold, warm and without the cache; damaged entries (truncated, a
//! flipped byte, another format version), a full disk and two builds sharing one cache at the
//! same time each end in recomputation or a clean refusal, never in other bytes.

use crate::common;

use orogen::eval::disk::{Miss, Store};
use orogen::eval::{DiskCache, EvalOptions, EvalResult, Evaluator, Targets};
use orogen::graph::Graph;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

const FLAGSHIP: &str = "graphs/alpine_valley.json";
/// The flagship's erosion run in full at 64² rather than 256² (these tests are about what is
/// recomputed, not about the terrain; a quarter of the time on a 2-core CI machine).
const SMALL: [&str; 8] = [
    "--set",
    "orogeny.base_resolution=64",
    "--set",
    "rain.base_resolution=64",
    "--set",
    "scree.base_resolution=64",
    "--set",
    "crags.base_resolution=64",
];

fn orogen(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .current_dir(common::repo())
        .env_remove("OROGEN_CACHE")
        .args(args)
        .output()
        .expect("run orogen");
    assert!(
        out.status.success(),
        "orogen {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `orogen build` of the flagship at 96² into `out` with the cache in `cache` (`None`: off)
/// and extra arguments; the manifest.
fn build(out: &Path, cache: Option<&Path>, extra: &[&str]) -> (Value, String) {
    let mut args = vec![
        "build",
        FLAGSHIP,
        "--size",
        "96",
        "--no-preview",
        "-o",
        out.to_str().expect("utf-8 path"),
    ];
    args.extend(SMALL);
    let c;
    match cache {
        Some(dir) => {
            c = dir.to_str().expect("utf-8 path").to_owned();
            args.extend(["--cache", &c, "--cache-all"]);
        }
        None => args.push("--no-cache"),
    }
    args.extend(extra);
    let o = orogen(&args);
    let text = std::fs::read_to_string(out.join("manifest.json")).expect("manifest");
    (
        serde_json::from_str(&text).expect("manifest json"),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn hashes(manifest: &Value) -> Vec<(String, String)> {
    manifest["outputs"]
        .as_array()
        .expect("outputs")
        .iter()
        .map(|o| (o["name"].to_string(), o["hash"].to_string()))
        .collect()
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|s| s.as_str().expect("name").to_owned())
        .collect()
}

/// `id` and every node downstream of it that an output needs.
fn downstream(g: &Graph, id: &str) -> BTreeSet<String> {
    let wanted = Targets::Outputs.node_set(g);
    let mut set = BTreeSet::from([id.to_owned()]);
    loop {
        let before = set.len();
        for n in &g.nodes {
            if n.inputs.iter().flatten().any(|r| set.contains(&r.node)) {
                set.insert(n.id.clone());
            }
        }
        if set.len() == before {
            break;
        }
    }
    set.retain(|n| wanted.contains(n));
    set
}

#[test]
fn a_late_edit_recomputes_only_that_node_and_what_it_feeds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let g = common::load(FLAGSHIP);
    let (cold, _) = build(&tmp.path().join("a"), Some(&cache), &[]);
    assert!(
        names(&cold["cache"]["read"]).is_empty(),
        "a cold cache: {cold}"
    );
    // A mid-graph parameter: the droplets' erosion speed.
    let (mid, explain) = build(
        &tmp.path().join("b"),
        Some(&cache),
        &["--set", "rain.kr=0.8", "--explain"],
    );
    let computed = names(&mid["cache"]["computed"]);
    assert_eq!(computed, downstream(&g, "rain"), "{explain}");
    assert!(names(&mid["cache"]["read"]).contains("soften"), "{mid}");
    assert!(
        explain.contains("computed rain: parameter kr 0.9 → 0.8"),
        "{explain}"
    );
    assert!(
        explain.contains("computed scree: input in (rain) changed"),
        "{explain}"
    );
    assert!(
        explain.contains("not needed (only read by results taken from the cache): "),
        "{explain}"
    );
    // A colour-only edit: only the colour chain runs again.
    let (late, explain) = build(
        &tmp.path().join("c"),
        Some(&cache),
        &[
            "--set",
            "rain.kr=0.8",
            "--set",
            "ground.shift=0.1",
            "--explain",
        ],
    );
    assert_eq!(
        names(&late["cache"]["computed"]),
        downstream(&g, "ground"),
        "{explain}"
    );
    // The same bytes as without the cache.
    let (off, _) = build(
        &tmp.path().join("d"),
        None,
        &["--set", "rain.kr=0.8", "--set", "ground.shift=0.1"],
    );
    assert_eq!(hashes(&late), hashes(&off));
    let (warm, _) = build(&tmp.path().join("e"), Some(&cache), &[]);
    assert!(names(&warm["cache"]["computed"]).is_empty(), "{warm}");
    assert_eq!(hashes(&warm), hashes(&cold));
}

fn evaluate(g: &Graph, disk: Option<Arc<DiskCache>>) -> EvalResult {
    Evaluator::new()
        .with_disk(disk)
        .evaluate(
            g,
            &EvalOptions {
                resolution: Some(64),
                ..EvalOptions::default()
            },
        )
        .expect("evaluate")
}

fn bits(r: &EvalResult) -> Vec<(String, Vec<u32>)> {
    r.fields
        .iter()
        .flat_map(|(id, fs)| {
            fs.iter()
                .map(move |f| (id.clone(), f.data().iter().map(|v| v.to_bits()).collect()))
        })
        .collect()
}

fn open(dir: &Path) -> Arc<DiskCache> {
    let mut c = DiskCache::open(dir, 1 << 30).expect("cache");
    c.store = Store::All;
    c.reserve_bytes = 0;
    Arc::new(c)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in std::fs::read_dir(dir.join("v1")).expect("v1").flatten() {
        for f in std::fs::read_dir(sub.path()).expect("fan-out").flatten() {
            out.push(f.path());
        }
    }
    out.sort();
    out
}

/// Damaged entries are recomputed, never trusted: each kind of damage applied to every entry
/// of an evaluated graph gives the cold result again, names the damage, and rewrites the entry.
#[test]
fn damaged_entries_are_recomputed_never_trusted() {
    type Damage = fn(&mut Vec<u8>);
    let g = common::load("graphs/olsen2004.json");
    let reference = bits(&evaluate(&g, None));
    let kinds: [(&str, Damage, &str); 3] = [
        (
            "truncated",
            |b| b.truncate(b.len() - 7),
            "truncated or extended",
        ),
        (
            "flipped byte",
            |b| {
                let at = b.len() - b.len() / 3;
                b[at] ^= 0x04;
            },
            "",
        ),
        (
            "other version",
            |b| b[8] = 9,
            "format version 9, this build reads 1",
        ),
    ];
    for (what, damage, reason) in kinds {
        let tmp = tempfile::tempdir().expect("tempdir");
        let disk = open(tmp.path());
        assert_eq!(bits(&evaluate(&g, Some(Arc::clone(&disk)))), reference);
        let files = entries(tmp.path());
        assert!(!files.is_empty());
        for f in &files {
            let mut b = std::fs::read(f).expect("entry");
            damage(&mut b);
            std::fs::write(f, b).expect("write");
        }
        let disk = open(tmp.path());
        let again = evaluate(&g, Some(Arc::clone(&disk)));
        assert_eq!(bits(&again), reference, "{what}: other bytes");
        assert!(
            again.disk_read.is_empty(),
            "{what}: a damaged entry was used"
        );
        assert!(!again.disk_damaged.is_empty(), "{what}: damage not noticed");
        for why in again.disk_damaged.values() {
            assert!(why.contains(reason), "{what}: {why}");
        }
        // Rewritten: a third run reads every entry back.
        let third = evaluate(&g, Some(open(tmp.path())));
        assert!(
            third.disk_damaged.is_empty(),
            "{what}: {:?}",
            third.disk_damaged
        );
        assert_eq!(bits(&third), reference);
    }
}

/// No space: the cache refuses to write (it keeps `reserve_bytes` free), says why once, and
/// the evaluation gives the same bytes. With a real full file system too where this machine
/// lets a user mount a small tmpfs (a user namespace): `orogen build` with its cache there
/// succeeds, warns, and writes the same outputs as without a cache.
#[test]
fn a_full_disk_refuses_cleanly() {
    let g = common::load("graphs/olsen2004.json");
    let reference = bits(&evaluate(&g, None));
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut c = DiskCache::open(tmp.path(), 1 << 30).expect("cache");
    c.store = Store::All;
    c.reserve_bytes = u64::MAX / 2;
    let disk = Arc::new(c);
    let r = evaluate(&g, Some(Arc::clone(&disk)));
    assert_eq!(bits(&r), reference);
    assert!(entries(tmp.path()).is_empty());
    let why = disk.take_refusal().expect("a refusal");
    assert!(why.contains("would leave less than the"), "{why}");

    let script = format!(
        "mkdir -p {dir}/small && mount -t tmpfs -o size=64k tmpfs {dir}/small && \
         {bin} build {graph} --size 96 --no-preview -o {dir}/out --cache {dir}/small/cache --cache-all {small}",
        dir = tmp.path().display(),
        bin = env!("CARGO_BIN_EXE_orogen"),
        graph = common::repo().join(FLAGSHIP).display(),
        small = SMALL.join(" "),
    );
    let probe = Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED the tmpfs half: this machine does not allow `unshare -rm` mounts");
        return;
    }
    let o = Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output()
        .expect("unshare");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: results not cached: "), "{err}");
    let (off, _) = build(&tmp.path().join("off"), None, &[]);
    let full: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(hashes(&full), hashes(&off));
}

/// Two builds share one cache at the same time (both writing every node, the same keys):
/// both succeed with the cold bytes, and every entry left is whole (a third build reads
/// them all back).
#[test]
fn two_builds_at_once_share_a_cache() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let spawn = |out: &str| {
        Command::new(env!("CARGO_BIN_EXE_orogen"))
            .current_dir(common::repo())
            .args([
                "build",
                FLAGSHIP,
                "--size",
                "96",
                "--no-preview",
                "--cache-all",
            ])
            .args(SMALL)
            .arg("--cache")
            .arg(&cache)
            .arg("-o")
            .arg(tmp.path().join(out))
            .spawn()
            .expect("spawn")
    };
    let (mut a, mut b) = (spawn("a"), spawn("b"));
    assert!(a.wait().expect("wait").success());
    assert!(b.wait().expect("wait").success());
    let read = |d: &str| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join(d).join("manifest.json")).expect("m"),
        )
        .expect("json")
    };
    let (off, _) = build(&tmp.path().join("off"), None, &[]);
    assert_eq!(hashes(&read("a")), hashes(&off));
    assert_eq!(hashes(&read("b")), hashes(&off));
    let (warm, _) = build(&tmp.path().join("c"), Some(&cache), &[]);
    assert!(names(&warm["cache"]["computed"]).is_empty(), "{warm}");
    assert_eq!(hashes(&warm), hashes(&off));
    let disk = open(&cache);
    for f in entries(&cache) {
        let name = f.file_stem().expect("stem").to_string_lossy().into_owned();
        let mut key = [0u8; 16];
        for (i, k) in key.iter_mut().enumerate() {
            *k = u8::from_str_radix(&name[2 * i..2 * i + 2], 16).expect("hex");
        }
        assert!(disk.get(&key).is_ok(), "{} does not read back", f.display());
    }
    assert_eq!(disk.get(&[0; 16]).err(), Some(Miss::Absent));
}

/// The folder stays within its limit: least recently used entries go first, and a hit
/// makes an entry recent.
#[test]
fn trimming_removes_least_recently_used_entries() {
    let g = common::load("graphs/olsen2004.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let disk = open(tmp.path());
    let r = evaluate(&g, Some(Arc::clone(&disk)));
    let files = entries(tmp.path());
    assert!(files.len() >= 3, "{files:?}");
    // Age every entry, then use one.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    for f in &files {
        let h = std::fs::File::options().append(true).open(f).expect("open");
        h.set_modified(old).expect("mtime");
    }
    let (id, key) = r.keys.iter().next().expect("a key");
    assert!(disk.get(key).is_ok(), "{id}");
    let hex = key
        .iter()
        .fold(String::new(), |s, b| s + &format!("{b:02x}"));
    let recent = files
        .iter()
        .find(|f| f.file_stem().is_some_and(|s| s.to_string_lossy() == hex))
        .expect("the used entry");
    let size = std::fs::metadata(recent).expect("meta").len();
    // A limit that holds only the recently used entry: every other one goes.
    let (removed, _) = disk.trim(size);
    assert_eq!(removed, files.len() - 1);
    assert!(
        disk.get(key).is_ok(),
        "the recently used entry {id} was removed"
    );
    assert_eq!(disk.usage().bytes, size);
}

/// A tiled build gives the same files cold, warm and without the cache (tiles' node results
/// are stored under keys that name the window, the node's span and the coarse size).
#[test]
fn a_tiled_build_gives_the_same_files_through_the_cache() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let c = cache.to_str().expect("utf-8").to_owned();
    let files = |out: &str, extra: &[&str]| -> Vec<(String, String)> {
        let dir = tmp.path().join(out);
        let d = dir.to_str().expect("utf-8").to_owned();
        let mut args = vec![
            "build",
            "graphs/olsen2004.json",
            "--size",
            "512",
            "--tiles",
            "2x2",
            "--no-preview",
            "-o",
            &d,
        ];
        args.extend(extra);
        orogen(&args);
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("manifest.json")).expect("manifest"),
        )
        .expect("json");
        m["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| (f["file"].to_string(), f["hash"].to_string()))
            .collect()
    };
    let off = files("off", &["--no-cache"]);
    assert!(off.len() > 8, "{off:?}");
    assert_eq!(files("cold", &["--cache", &c, "--cache-all"]), off);
    let stored = DiskCache::open(&cache, 1 << 30).expect("cache").usage();
    assert!(stored.entries > 0, "nothing stored");
    assert_eq!(files("warm", &["--cache", &c, "--cache-all"]), off);
}
