//! `deployfit report`: the HTML page of the real binary, its escaping, and what headless
//! Chromium renders of it.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{deploy_files, deployfit, root, scratch};

/// Runs `deployfit report ARGS -o OUT` in the repository root and returns the page.
fn report(args: &[&str], out: &Path) -> (Output, String) {
    let out_text = out.to_str().expect("a UTF-8 scratch path");
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out_text]);
    let output = deployfit(&all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "report failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(out).expect("the report is written");
    (output, html)
}

/// The deployment names declared in the example files.
fn example_deployments() -> Vec<String> {
    deploy_files("examples")
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.lines()
                .filter_map(|line| {
                    let rest = line.trim_start().strip_prefix("deployment ")?;
                    Some(rest.split([' ', '{']).next()?.to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every `src=`, `href=` and CSS `url(` value of a page, and whether it loads anything
/// from another host.
fn network_references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in ["src=", "href=", "url(", "@import"] {
        for (at, _) in html.match_indices(attribute) {
            let value = html[at + attribute.len()..]
                .trim_start_matches(['"', '\'', ' '])
                .to_ascii_lowercase();
            if value.starts_with("http:") || value.starts_with("https:") || value.starts_with("//")
            {
                found.push(html[at..].chars().take(60).collect());
            }
            if attribute == "@import" {
                found.push("@import".into());
            }
        }
    }
    found
}

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

/// The text of the `<section>` of deployment `name`.
fn section<'a>(html: &'a str, name: &str) -> &'a str {
    let heading = format!("<h2>{name} <span");
    let at = html
        .find(&heading)
        .unwrap_or_else(|| panic!("no section for `{name}`"));
    let end = html[at..].find("</section>").map_or(html.len(), |e| at + e);
    &html[at..end]
}

#[test]
fn report_of_the_examples_is_one_offline_page_with_bars_scatter_and_matrices() {
    let dir = scratch("report-examples");
    let out = dir.join("report.html");
    let (output, html) = report(&["examples/"], &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("wrote "), "{stderr}");

    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert_eq!(network_references(&html), Vec::<String>::new());
    for tag in ["<script", "<link", "<img", "<iframe", "<object", "<embed"] {
        assert!(!html.contains(tag), "the page has a {tag} element");
    }
    assert!(html.contains("<style>"), "the CSS is inline");

    let names = example_deployments();
    assert!(names.len() >= 12, "{names:?}");
    // A mixed fleet has no single deployment's memory bar: its card shows the fleet.
    let fleet = section(&html, "mixed_api");
    assert!(fleet.contains("mixed fleet"), "{fleet}");
    assert!(fleet.contains("<td>h100_sxm5</td>"), "{fleet}");
    assert!(fleet.contains("the mix saves"), "{fleet}");
    let names: Vec<String> = names.into_iter().filter(|n| n != "mixed_api").collect();
    for name in &names {
        let section = section(&html, name);
        // Every example evaluates: each has its memory bar with GiB figures.
        assert_eq!(count(section, "<svg class=\"memory-bar\""), 1, "{name}");
        assert!(section.contains(" GiB"), "{name}");
        assert!(section.contains("<dt>decode</dt>"), "{name}");
        assert!(section.contains("/Mtok"), "{name}: no $/Mtok");
    }
    assert_eq!(count(&html, "<svg class=\"memory-bar\""), names.len());

    // The file with a hole: the solver's candidates as a scatter with the Pareto front.
    let cheapest = section(&html, "cheapest_card");
    assert!(cheapest.contains("<svg class=\"scatter\""), "{cheapest}");
    assert!(cheapest.contains("<polyline class=\"pareto\""));
    assert!(cheapest.contains("<circle class=\"point front\""));
    assert!(cheapest.contains("<table class=\"candidates\">"));
    assert!(cheapest.contains("deploy::solve::chosen"));
    assert_eq!(count(&html, "<svg class=\"scatter\""), 1);

    // The summary names each deployment's model and GPUs, and no evaluated deployment
    // (the mixed fleet included) reads "not evaluated" (issue 36).
    let nav = &html[html.find("<nav").unwrap()..html.find("</nav>").unwrap()];
    assert!(nav.contains("<th>model</th><th>GPU</th>"), "{nav}");
    assert!(
        nav.contains("<td class=\"mono\">llama_3_1_70b</td><td class=\"gpu\">2 × h100_sxm5</td>"),
        "{nav}"
    );
    assert!(
        nav.contains("mixed fleet") && !html.contains("not evaluated"),
        "{nav}"
    );
    // Backticks in messages and helps are code; tables scroll rather than break.
    assert!(!html.contains('`'), "a raw backtick");
    assert!(html.contains("help: <code>"), "no help with code");
    assert!(html.contains("<div class=\"scroll\"><table class=\"diagnostics\">"));
    // The matrices are folded, and limited to the engine the deployments run the model
    // on: glm4_9b runs on llama.cpp in both examples that use it.
    assert!(html.contains("<details>\n<summary>Models by weight format"));
    assert!(html.contains("<table class=\"matrix\">"));
    assert!(html.contains("<h3 class=\"model\" id=\"m0\">"));
    let matrix_text =
        String::from_utf8_lossy(&deployfit(&["matrix", "glm4_9b", "--engine", "llamacpp"]).stdout)
            .into_owned();
    let q4 = matrix_text
        .lines()
        .find(|l| l.starts_with("Q4_K_M "))
        .expect("a Q4_K_M row in `deployfit matrix glm4_9b`");
    let cells: Vec<&str> = q4
        .split("  ")
        .map(str::trim)
        .filter(|cell| cell.contains("GiB"))
        .collect();
    assert_eq!(cells.len(), 4, "{q4}");
    for cell in cells {
        assert!(
            html.contains(&format!("<td class=\"n\">{cell}</td>")),
            "the report's glm4_9b matrix has no `{cell}` as `deployfit matrix` prints"
        );
    }
}

#[test]
fn user_strings_are_escaped() {
    // A folder and file name with markup and non-ASCII, holding the fixture.
    let dir = scratch("report-hostile").join("ünïcödé — 日本 <b>&\"x\"");
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = dir.join("a<i>'.deploy");
    std::fs::copy(
        root().join("tests/fixtures/report/hostile.deploy"),
        &fixture,
    )
    .unwrap();
    let out = dir.join("report.html");
    // Exit 0 although the deployments have errors: the report shows them.
    let (_, html) = report(&[dir.to_str().unwrap()], &out);

    for raw in ["<script", "<img", "<b>", "<i>", "onerror=alert(1)>"] {
        assert!(!html.contains(raw), "`{raw}` is not escaped");
    }
    assert!(html.contains(
        "&lt;script&gt;alert(&#39;msg&#39;)&lt;/script&gt; ünïcödé — 日本 &amp; &quot;co&quot;"
    ));
    assert!(html.contains("<p class=\"doc\">Doc with &lt;script&gt;alert(&quot;doc&quot;)&lt;/script&gt; &amp; ünïcödé — 日本</p>"));
    assert!(html.contains("ünïcödé — 日本 &lt;b&gt;&amp;&quot;x&quot;/a&lt;i&gt;&#39;.deploy"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("<span class=\"badge error\">error</span>"));
    assert!(section(&html, "unknown_model").contains("Not evaluated"));
    assert!(html.contains("<meta charset=\"utf-8\">"));

    // `-o -` writes the same page to standard output.
    let output = deployfit(&["report", dir.to_str().unwrap(), "-o", "-"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), html);

    // Usage and I/O errors: exit 2 with a message.
    let missing = deployfit(&["report", "no/such/dir", "-o", out.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    let unwritable = deployfit(&[
        "report",
        fixture.to_str().unwrap(),
        "-o",
        dir.join("no/such/dir/r.html").to_str().unwrap(),
    ]);
    assert_eq!(unwritable.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unwritable.stderr).contains("cannot write"));
    let no_output = deployfit(&["report", "examples/"]);
    assert_eq!(no_output.status.code(), Some(2));
    let over_input = deployfit(&[
        "report",
        fixture.to_str().unwrap(),
        "-o",
        fixture.to_str().unwrap(),
    ]);
    assert_eq!(over_input.status.code(), Some(2));
    assert_eq!(
        std::fs::read(&fixture).unwrap(),
        std::fs::read(root().join("tests/fixtures/report/hostile.deploy")).unwrap(),
        "the report overwrote its input"
    );
}

/// Runs Chromium headless with `args` and returns its output; killed after a minute.
fn chromium(profile: &Path, args: &[&str]) -> Output {
    let start = Instant::now();
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).unwrap();
        bytes
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish in a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: Vec::new(),
    }
}

fn chromium_installed() -> bool {
    Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Needs Chromium, which a machine with only Rust lacks: ignored by `cargo test`, run by
/// `.ci/run` (which installs Chromium) as `cargo test --test it report:: -- --ignored`, where a
/// missing browser fails it.
#[test]
#[ignore = "needs chromium: .ci/run installs it and runs this with --ignored"]
fn chromium_renders_the_report() {
    assert!(
        chromium_installed(),
        "chromium is not installed: `apt-get install -y chromium` (.ci/run does)"
    );
    let dir = scratch("report-chromium");
    let out = dir.join("report.html");
    // Two examples keep the test quick: a tight fit and a deployment with a hole.
    let (_, html) = report(
        &[
            "examples/02-glm4-32b-at-the-limit.deploy",
            "examples/12-cheapest-gpu.deploy",
        ],
        &out,
    );
    let url = format!("file://{}", out.display());
    let profile: PathBuf = dir.join("profile");

    // The screenshot: not blank, and the bars' colours are drawn.
    let png_path = dir.join("report.png");
    let shot = chromium(
        &profile,
        &[
            &format!("--screenshot={}", png_path.display()),
            "--window-size=1200,2000",
            &url,
        ],
    );
    assert!(shot.status.success(), "chromium --screenshot failed");
    let bytes = std::fs::read(&png_path).expect("chromium wrote the screenshot");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a frame size")];
    let info = reader.next_frame(&mut buffer).expect("a frame");
    assert_eq!((info.width, info.height), (1200, 2000));
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let mut colours = HashSet::new();
    let (mut coloured, mut total, mut weights_blue) = (0usize, 0usize, 0usize);
    for row in buffer[..info.buffer_size()].chunks(info.line_size) {
        for pixel in row.chunks(channels) {
            let (r, g, b) = (pixel[0], pixel[1], pixel[2]);
            total += 1;
            colours.insert((r, g, b));
            if (r, g, b) != (255, 255, 255) {
                coloured += 1;
            }
            // The weights' #3b6fb6.
            if r.abs_diff(0x3b) <= 3 && g.abs_diff(0x6f) <= 3 && b.abs_diff(0xb6) <= 3 {
                weights_blue += 1;
            }
        }
    }
    assert!(
        colours.len() > 50,
        "the screenshot has {} colours",
        colours.len()
    );
    assert!(
        coloured * 20 > total,
        "the screenshot is nearly blank: {coloured} of {total} pixels are not white"
    );
    assert!(
        weights_blue > 1000,
        "no memory bar drawn: {weights_blue} pixels of the weights' colour"
    );

    // The DOM Chromium builds holds the SVG elements.
    let dom = chromium(&profile, &["--dump-dom", &url]);
    assert!(dom.status.success(), "chromium --dump-dom failed");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(
        count(&dom, "<svg class=\"memory-bar\""),
        count(&html, "<svg class=\"memory-bar\"")
    );
    assert_eq!(count(&dom, "<svg class=\"memory-bar\""), 2);
    assert_eq!(count(&dom, "<svg class=\"scatter\""), 1);
    assert!(dom.contains("<polyline class=\"pareto\""));
    assert!(dom.contains("<rect class=\"segment weights\""));
    assert!(dom.contains("<table class=\"matrix\">"));

    // At 700 and 1280 px the page of every example fits the width (wide tables scroll
    // inside their box) and no file or "where" cell breaks over lines (issue 36: at 700
    // px the page was 958 px wide and a path broke into 17 lines). A probe page frames
    // the report and measures it.
    let full = dir.join("examples.html");
    report(&["examples/"], &full);
    for width in [700, 1280] {
        let probe = dir.join(format!("probe-{width}.html"));
        std::fs::write(
            &probe,
            format!(
                r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="examples.html" style="width:{width}px;height:1000px;border:0"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById('f').addEventListener('load', function () {{
  var d = this.contentDocument, lines = 0;
  d.querySelectorAll('td.path').forEach(function (td) {{
    var range = d.createRange(); range.selectNodeContents(td);
    var tops = {{}};
    Array.prototype.forEach.call(range.getClientRects(), function (r) {{ tops[Math.round(r.top)] = 1; }});
    lines = Math.max(lines, Object.keys(tops).length);
  }});
  document.getElementById('out').textContent =
    'width=' + d.documentElement.scrollWidth + ' lines=' + lines + ' cells=' + d.querySelectorAll('td.path').length;
}});
</script></body></html>"#
            ),
        )
        .unwrap();
        let dom = chromium(
            &profile,
            &[
                "--allow-file-access-from-files",
                "--virtual-time-budget=5000",
                "--dump-dom",
                &format!("file://{}", probe.display()),
            ],
        );
        let dom = String::from_utf8_lossy(&dom.stdout);
        let at = dom.find("width=").expect("the probe ran");
        let words: Vec<u64> = dom[at..]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .take(3)
            .map(|w| w.parse().unwrap())
            .collect();
        let (page, lines, cells) = (words[0], words[1], words[2]);
        assert!(page <= width, "at {width} px the page is {page} px wide");
        assert!(cells > 10, "{cells} path cells");
        assert_eq!(lines, 1, "at {width} px a path cell takes {lines} lines");
    }
}
