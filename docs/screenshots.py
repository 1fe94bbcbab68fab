"""Screenshots of the Snakemake report of the demo build, rendered by headless Chromium.

Needs Debian's chromium package (`apt-get install chromium`). Builds the demo when it is not built yet,
writes the report, then for each view opens a copy of the report whose added script clicks through the
report's menu (Chromium's command line cannot click) and saves a PNG under docs/screenshots/.

    .venv/bin/python docs/screenshots.py [--workdir .] [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]

# view -> clicks: {"text": t} clicks the element showing exactly t; {"eye": path} opens that result's view.
VIEWS = {
    "overview": [],
    "raw-downloads": [{"text": "1. Raw downloads"}, {"eye": "results/check/sources.html"}],
    "validation": [{"text": "2. Validation"}, {"eye": "results/validation/summary.html"}],
    "contact-sheet-ct-rate": [
        {"text": "3. Contact sheets"},
        {"text": "3D_Task"},
        {"eye": "results/report/contact/3D_Task/CT_RATE.png"},
    ],
    "contact-sheet-vindr-cxr": [
        {"text": "3. Contact sheets"},
        {"text": "2D_Task"},
        {"eye": "results/report/contact/2D_Task/VindrCXR.png"},
    ],
    "contact-sheet-mimic-cxr-t": [
        {"text": "3. Contact sheets"},
        {"text": "2D_Task"},
        {"eye": "results/report/contact/2D_Task/MIMIC-CXR-T.png"},
    ],
}

CLICKER = """<script>
window.addEventListener('load', function () {
  const steps = STEPS;
  function find(step) {
    if (step.eye) {
      const cell = Array.from(document.querySelectorAll('td')).find(e => e.textContent.trim() === step.eye);
      return cell && cell.parentElement.querySelector('a[iconname=eye]');
    }
    const hits = Array.from(document.querySelectorAll('a, button, li, td'))
      .filter(e => e.textContent.trim() === step.text);
    return hits[hits.length - 1];
  }
  steps.forEach((step, i) => setTimeout(function () {
    const target = find(step);
    if (target) { target.click(); } else { document.title = 'MISSING ' + JSON.stringify(step); }
  }, 700 * (i + 1)));
});
</script>"""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",  # runs as root in containers
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # no network here: avoid its refused connections
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,900",
    "--virtual-time-budget=10000",  # run the report's scripts and our clicks before the shot
]


def snakemake(workdir: Path, *args: str) -> None:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    subprocess.run(command, check=True)


def with_clicks(report_html: str, steps: list[dict]) -> str:
    head, marker, tail = report_html.rpartition("</body>")  # the last one: the report's scripts hold others
    if not marker:
        raise SystemExit("the report has no </body>: cannot add the clicking script")
    return head + CLICKER.replace("STEPS", json.dumps(steps)) + marker + tail


def shoot(chromium: str, page: Path, png: Path, profile: Path) -> None:
    command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}", page.as_uri()]
    subprocess.run(command, check=True, capture_output=True, timeout=180)
    with Image.open(png) as image:  # UI screenshots keep their look in 256 colours at a third of the size
        image.convert("RGB").quantize(256).save(png, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=REPO, help="where config.yaml and the demo build are")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium not found: install Debian's package (apt-get install chromium)")
    subprocess.run([sys.executable, "-m", "preprocess", "demo", "demo"], cwd=args.workdir, check=True)
    snakemake(args.workdir, "--cores", "2")  # nothing to do when the demo is built
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="medheb-shots-") as scratch:
        scratch = Path(scratch)
        snakemake(args.workdir, "--report", str(scratch / "report.html"))
        report = (scratch / "report.html").read_text(encoding="utf-8")
        for name, steps in VIEWS.items():
            page = scratch / f"{name}.html"
            page.write_text(with_clicks(report, steps), encoding="utf-8")
            shoot(chromium, page, args.out / f"{name}.png", scratch / "profile")
            print(f"{args.out / name}.png")


if __name__ == "__main__":
    main()
