#!/usr/bin/env python3
"""The live view in a real browser: headless Chromium driven by Selenium (Debian's chromium,
chromium-driver and python3-selenium) against `heartwave live` on a small quiescent sheet.

    /usr/bin/python3 tests/browser/test_live_browser.py --heartwave build/apps/heartwave/heartwave
        [--gallery docs/gallery]   # also the screenshots of docs/gallery.md (a 2D and a 3D case)

Checks: the page loads and frames change; a click on quiescent tissue starts a wave there
(V read from the engine through the page's probe control, not from pixels); a parameter
change takes effect (dt and the conductivity scale, as the run reports them); pause and
resume; bad control values are refused with a message and the run goes on; a second tab
watches the same run and closing it leaves the first going; requests without the token,
with another token or for another file are refused; no console errors. Exit 77 (skipped)
with the reason when Selenium or Chromium cannot run here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

SKIP = 77

SHEET = """
name = "live_sheet"
[grid]
length = [20, 20]
spacing = 0.5
[conductivity]
diffusivity = 1.0
chi = 140
cm = 0.01
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.05
t_end = 100000
integrator = "rl1"
[output]
directory = "out"
activation_map = true
activation_threshold = 0.5
probes = [{ name = "centre", position = [10, 10] }, { name = "corner", position = [2, 2] }]
"""

SCROLL = """
name = "live_scroll"
[grid]
length = [24, 24, 12]
spacing = 0.5
[conductivity]
diffusivity = 1.0
chi = 140
cm = 0.01
[[model]]
name = "aliev_panfilov_1996"
[[initial]]
region = { kind = "box", lo = [0, 0, 0], hi = [12, 24, 12] }
variable = "V"
value = 1.0
[[initial]]
region = { kind = "box", lo = [0, 0, 0], hi = [24, 12, 12] }
variable = "v"
value = 1.0
[time]
dt = 0.04
t_end = 100000
integrator = "rl1"
[output]
directory = "out"
"""


def gallery_shot(hw: str, folder: Path, png: Path, browser, ready, case_text=None, case=None, threads=1,
                 size=None) -> None:
    """heartwave live on a case, a page that waits for ready(driver), then its screenshot."""
    folder.mkdir()
    p, url = start_live(hw, case_text, folder, case=case, threads=threads, timeout=300)
    try:
        d = browser()
        if size:
            d.set_window_size(*size)
        d.get(url)
        ready(d)
        d.save_screenshot(str(png))
        print(f"     screenshot {png}")
        d.quit()
    finally:
        p.terminate()
        p.wait(timeout=20)


def gallery_shots(hw: str, work: Path, gallery: Path, browser) -> None:
    """The screenshots of docs/gallery.md beyond the sheet's: the slab's scroll wave and, where
    ../shared is present, the rabbit ventricles (examples/rabbit_layers.toml) on this
    machine's cores as the wave leaves the apex."""
    def scroll(d):
        wait_for(lambda: d.execute_script("return window.hw && hw.header && hw.header.t > 60"), "the scroll wave",
                 timeout=120)
        time.sleep(1)

    gallery_shot(hw, work / "scroll", gallery / "live_scroll.png", browser, scroll, case_text=SCROLL)
    rabbit = Path(__file__).resolve().parents[2] / "examples" / "rabbit_layers.toml"
    if not (rabbit.exists() and (Path(__file__).resolve().parents[3] / "shared" / "geometry").exists()):
        return

    def heart(d):
        wait_for(lambda: d.execute_script("return window.hw && hw.volume && hw.volume.drawn >= 2"), "the rabbit's surface",
                 timeout=120)
        t0 = d.execute_script("return hw.header.t")
        wait_for(lambda: d.execute_script("return hw.header.t") > t0 + 20, "20 ms of the rabbit", timeout=600, every=1)
        expect(True, f"the rabbit live in the browser: t {t0:.1f} -> {d.execute_script('return hw.header.t'):.1f} ms, "
                     f"{d.execute_script('return hw.volume.renderer')}")

    gallery_shot(hw, work / "rabbit", gallery / "live_rabbit.png", browser, heart, case=rabbit,
                 threads=os.cpu_count() or 1, size=(1400, 1100))


def skip(why: str) -> int:
    print(f"SKIP: {why}")
    return SKIP


class Failure(Exception):
    pass


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)
    print(f"ok   {what}")


def wait_for(fn, what: str, timeout: float = 10.0, every: float = 0.1):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise Failure(f"timed out ({timeout} s) waiting for {what} (last: {last!r})")


def start_live(hw: str, case_text: str | None, folder: Path, case: Path | None = None, threads: int = 1,
               timeout: float = 60) -> tuple[subprocess.Popen, str]:
    """heartwave live on case_text (written into folder), or on an existing case file."""
    if case is None:
        case = folder / "case.toml"
        case.write_text(case_text)
    p = subprocess.Popen([hw, "live", str(case), "--backend", "cpu", "--threads", str(threads), "--quiet"], cwd=folder,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = None
    t0 = time.time()
    while time.time() - t0 < timeout:
        line = p.stdout.readline()
        if not line:
            break
        m = re.search(r"live: open (\S+)", line)
        if m:
            url = m.group(1)
            break
    if not url:
        p.kill()
        raise Failure("heartwave live printed no address")
    return p, url


SHELL = """
name = "live_shell"
[grid]
length = [12, 12, 14]
spacing = 0.5
[geometry]
kind = "ellipsoid-shell"
centre = [6, 6, 7]
radii_outer = [5.5, 5.5, 6.5]
radii_inner = [3.5, 3.5, 4.5]
[conductivity]
diffusivity = 1.0
chi = 140
cm = 0.01
[[model]]
name = "aliev_panfilov_1996"
[time]
dt = 0.04
t_end = 100000
integrator = "rl1"
[output]
directory = "out"
"""


def check_volume(hw: str, work: Path, browser, By, ActionChains) -> None:
    """A 3D heart: the surface drawn from the frame's volume, rotated by a drag, zoomed by the
    wheel, and a Ctrl-click on it stimulates the tissue under the pointer."""
    (work / "shell").mkdir()
    p, url = start_live(hw, SHELL, work / "shell")
    d = browser()
    try:
        js = d.execute_script
        d.get(url)
        wait_for(lambda: js("return window.hw && hw.volume && hw.volume.drawn >= 2"), "the volume drawn")
        expect(not js("return document.getElementById('volume-figure').hidden"), "a 3D case shows the volume view")
        # The picture: tissue pixels (not the background) in the middle of the canvas.
        count = """const c = document.getElementById('volume'), t = document.createElement('canvas');
                   t.width = c.width; t.height = c.height; const g = t.getContext('2d'); g.drawImage(c, 0, 0);
                   const px = g.getImageData(0, 0, t.width, t.height).data; let n = 0, h = 0;
                   for (let i = 0; i < px.length; i += 4) { if (px[i] + px[i + 1] + px[i + 2] > 60) ++n;
                     h = (h * 31 + px[i] + 7 * px[i + 1] + 13 * px[i + 2]) | 0; }
                   return [n, h];"""
        n0, h0 = js(count)
        expect(n0 > 0.1 * 360 * 360, f"the surface covers the view ({n0} of {360 * 360} pixels, {js('return hw.volume.renderer')})")
        canvas = d.find_element(By.ID, "volume")
        yaw = js("return hw.volume.yaw")
        ActionChains(d).move_to_element(canvas).click_and_hold().move_by_offset(60, 20).release().perform()
        wait_for(lambda: js("return hw.volume.yaw") != yaw, "the drag to rotate")
        _, h1 = js(count)
        expect(h1 != h0, f"a drag rotates the heart (yaw {yaw:.2f} -> {js('return hw.volume.yaw'):.2f})")
        zoom = js("return hw.volume.zoom")
        d.execute_script("arguments[0].dispatchEvent(new WheelEvent('wheel', {deltaY: -300, bubbles: true, cancelable: true}))", canvas)
        expect(js("return hw.volume.zoom") > zoom, f"the wheel zooms in ({zoom:.2f} -> {js('return hw.volume.zoom'):.2f})")
        expect(js("return hw.volume.hit(0, 0) !== null"), "the page's own ray from the centre of the view meets tissue")
        n_replies = js("return hw.replies.length")
        ActionChains(d).key_down("\ue009").move_to_element(canvas).click().key_up("\ue009").perform()  # Ctrl
        # A generous wait: on a loaded 2-core machine (CI builds the wheel beside this test)
        # the run's thread and the software-rendered page share what is left.
        try:
            wait_for(lambda: js("return hw.replies.length") > n_replies, "the reply to a Ctrl-click on the surface",
                     timeout=30)
        except Failure as e:
            seen = js("return [hw.volume.ctrlClicks, hw.volume.pick, document.getElementById('messages').textContent]")
            raise Failure(f"{e}; Ctrl-clicks the page saw, its pick, its messages: {seen}") from None
        reply = js("return hw.replies[hw.replies.length - 1]")
        pick = js("return hw.volume.pick")
        expect(reply["op"] == "stimulate" and reply["ok"] and pick is not None,
               f"Ctrl-click on the surface stimulates the cell under the pointer (block {pick}): {reply.get('message', '')}")
        # The default probe of a hollow heart: on the tissue nearest the centre, not in the cavity.
        wait_for(lambda: js("return hw.status && hw.status.probes.length > 0"), "probe samples", timeout=10)
        expect(js("return hw.status.probes.every((p) => p[1] !== null)"),
               f"the centre probe of a hollow shell reads tissue ({js('return hw.status.probes[0]')})")
        severe = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
        expect(not severe, f"no console errors in the 3D view ({severe[:3]})")
    finally:
        d.quit()
        p.terminate()
        p.wait(timeout=20)


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heartwave", required=True)
    ap.add_argument("--gallery", help="write the views' screenshots here")
    a = ap.parse_args()
    a.heartwave = str(Path(a.heartwave).resolve())
    try:
        from selenium import webdriver
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select
    except ImportError:
        return skip("python3-selenium is not installed (tools/setup.sh installs it)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        return skip("chromium and chromium-driver are not installed (tools/setup.sh installs them)")

    def browser():
        o = webdriver.ChromeOptions()
        o.binary_location = chromium
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000",
                    "--enable-unsafe-swiftshader"):
            o.add_argument(arg)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        return webdriver.Chrome(service=Service(executable_path=driver_path), options=o)

    work = Path(tempfile.mkdtemp(prefix="hw_live_browser_"))
    proc = None
    try:
        proc, url = start_live(a.heartwave, SHEET, work)
        try:
            d = browser()
        except Exception as e:  # noqa: BLE001: any failure to start Chromium is a skip
            return skip(f"Chromium did not start here: {str(e).splitlines()[0]}")
        t_start = time.time()
        try:
            js = d.execute_script
            d.get(url)
            wait_for(lambda: js("return window.hw && window.hw.hello && window.hw.frames >= 2"), "the first frames")
            print(f"     renderer: {js('return hw.renderer')}")
            t0 = js("return hw.header.t")
            wait_for(lambda: js("return hw.header.t") > t0 and js("return hw.frames") > 4, "frames that change")
            expect(True, "the page loads and its frames change (t advances)")

            def send(msg: dict) -> dict:
                rid = js("return hw.send(arguments[0])", msg)
                return wait_for(lambda: js("return hw.reply(arguments[0])", rid), f"the reply to {msg}")

            # The speed control: 10 simulated ms per second, so that a wave lasts long enough to watch.
            speed = d.find_element(By.ID, "speed")
            speed.clear()
            speed.send_keys("10")
            d.find_element(By.ID, "speed-set").click()
            wait_for(lambda: js("return hw.status.speed") == 10, "speed 10 ms/s")
            ta, wa = js("return hw.status.t"), time.time()
            time.sleep(1.0)
            rate = (js("return hw.status.t") - ta) / (time.time() - wa)
            expect(7 < rate < 13, f"the speed control holds the run at 10 ms/s ({rate:.1f} ms/s)")

            # Pause and resume.
            d.find_element(By.ID, "pause").click()
            wait_for(lambda: js("return hw.status && hw.status.paused"), "paused")
            tp = js("return hw.status.t")
            time.sleep(0.6)
            expect(js("return hw.status.t") == tp, "pause stops the clock")
            d.find_element(By.ID, "resume").click()
            wait_for(lambda: not js("return hw.status.paused") and js("return hw.status.t") > tp, "resumed")
            expect(True, "resume starts it again")

            # A click on quiescent tissue: V rises there in the engine.
            field = d.find_element(By.ID, "field")
            w, h = field.size["width"], field.size["height"]
            fx, fy = 0.3, 0.25  # from the left, from the top (the page draws y up)
            ext = js("return hw.hello.extent")
            x_mm, y_mm = fx * ext[0], (1 - fy) * ext[1]
            before = send({"op": "probe", "x": x_mm, "y": y_mm})
            expect(before["ok"] and before["value"] < 0.1, f"the tissue at ({x_mm:.1f}, {y_mm:.1f}) mm is quiescent (V = {before['value']:.3g})")
            ActionChains(d).move_to_element_with_offset(field, int((fx - 0.5) * w), int((fy - 0.5) * h)).click().perform()
            wait_for(lambda: js("return hw.replies.some(r => r.op === 'stimulate' && r.ok)"), "the stimulus accepted")

            def risen():
                r = send({"op": "probe", "x": x_mm, "y": y_mm})
                return r["value"] is not None and r["value"] > 0.5 and r
            r = wait_for(risen, "V to rise at the click", timeout=10, every=0.2)
            expect(True, f"the click starts a wave there: V = {r['value']:.3g} at t = {r['t']:.1f} ms (engine)")
            stims = wait_for(lambda: js("return hw.status.stimuli"), "the stimulus count")
            expect(stims == 1, "the run holds the one stimulus added")

            # A parameter change takes effect.
            Select(d.find_element(By.ID, "parameter")).select_by_value("time.dt")
            box = d.find_element(By.ID, "parameter-value")
            box.clear()
            box.send_keys("0.02")
            d.find_element(By.ID, "parameter-set").click()
            wait_for(lambda: js("return hw.status.dt") == 0.02, "dt = 0.02 ms in the run's status")
            expect(js("return hw.hello.parameters.find(p => p.name === 'time.dt').value") == 0.02, "dt changes while running")
            r = send({"op": "set", "name": "conductivity.scale", "value": 1.5})
            expect(r["ok"] and js("return hw.hello.parameters.find(p => p.name === 'conductivity.scale').value") == 1.5,
                   "the conductivity scale changes while running")

            # Bad values: a message in the page, the run unharmed.
            amp = d.find_element(By.ID, "amplitude")
            amp.clear()
            amp.send_keys("1e9")
            n_err = js("return hw.errors.length")
            ActionChains(d).move_to_element_with_offset(field, int(0.3 * w), int(0.3 * h)).click().perform()
            wait_for(lambda: js("return hw.errors.length") > n_err, "the refusal of a huge stimulus")
            expect("amplitude" in js("return hw.errors[hw.errors.length - 1]"), "a huge stimulus is refused with a message")
            expect(len(d.find_elements(By.CSS_SELECTOR, "#messages .error")) > 0, "the refusal shows in the page")
            for bad in ('{"op":"set","name":"time.dt","value":NaN}', '{"op":"set","name":"time.dt","value":1e999}',
                        '{"op":"stimulate","x":-5,"y":1}', '{"op":"exec","cmd":"ls"}', '{"op":"view","name":"../x"}',
                        '{"op":"save","name":"../../etc/passwd"}', "x" * 5000):
                n_err = js("return hw.errors.length")
                js("hw.sendRaw(arguments[0])", bad)
                wait_for(lambda: js("return hw.errors.length") > n_err, f"the refusal of {bad[:40]}")
            expect(True, "NaN, infinite, out-of-range, unknown and oversized controls are refused")
            t1 = js("return hw.status.t")
            wait_for(lambda: js("return hw.status.t") > t1 and not js("return hw.status.failure"), "the run going on")
            expect(True, "the run goes on after the refusals")

            # A movie of the view, recorded in the browser (MediaRecorder, WebM).
            d.find_element(By.ID, "record").click()
            wait_for(lambda: js("return hw.movie.frames") >= 10, "frames recorded into the movie")
            d.find_element(By.ID, "record-stop").click()
            wait_for(lambda: js("return hw.movie.bytes") > 0, "the movie saved")
            movie = js("return hw.movie")
            expect(movie["bytes"] > 1000 and movie["type"].startswith("video/webm"),
                   f"a movie of {movie['frames']} frames, {movie['bytes']} bytes of {movie['type']}")

            # Save and restore.
            expect(send({"op": "save", "name": "a"})["ok"], "a checkpoint saved")
            expect(send({"op": "restore", "name": "a"})["ok"], "and restored")
            expect(not send({"op": "restore", "name": "b"})["ok"], "restoring an unknown one is refused")

            # A second tab watches the same run; closing it costs the first nothing.
            first = d.current_window_handle
            d.switch_to.new_window("tab")
            d.get(url)
            wait_for(lambda: js("return window.hw && hw.frames >= 2"), "frames in a second tab")
            expect(js("return hw.hello.case") == "live_sheet", "a second tab watches the same run")
            d.close()
            d.switch_to.window(first)
            f1 = js("return hw.frames")
            wait_for(lambda: js("return hw.frames") > f1 + 3, "frames after the second tab closed")
            expect(True, "closing a tab leaves the other going")

            # The token and the files.
            base = url.rstrip("/")
            root = base[: base.rfind("/")]
            token = base[base.rfind("/") + 1:]
            expect(http_status(url) == 200, "the page with its token: 200")
            expect(http_status(root + "/") == 403, "no token: 403")
            expect(http_status(root + "/" + "0" * len(token) + "/") == 403, "another token: 403")
            expect(http_status(url + "../../etc/passwd") in (403, 404), "a path outside the page: refused")
            expect(http_status(url + "session.cpp") == 404, "a file that is not the page's: 404")

            if a.gallery:
                gallery = Path(a.gallery)
                gallery.mkdir(parents=True, exist_ok=True)
                time.sleep(1.5)  # the activation map is sent about twice a second
                d.save_screenshot(str(gallery / "live_sheet.png"))
                print(f"     screenshot {gallery / 'live_sheet.png'}")

            severe = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
            expect(not severe, f"no console errors ({severe[:3]})")
            print(f"     the browser checks took {time.time() - t_start:.1f} s")

            check_volume(a.heartwave, work, browser, By, ActionChains)

            # Ctrl-C (here SIGTERM) with the tab still open: the run stops cleanly and its
            # action log replays.
            proc.terminate()
            out, _ = proc.communicate(timeout=30)
            expect(proc.returncode == 0 and "live: stopped" in out, f"SIGTERM with a tab open ends the run cleanly (exit {proc.returncode})")
            log = work / "out" / "live-actions.jsonl"
            lines = log.read_text().splitlines() if log.exists() else []
            expect(len(lines) > 5 and '"event":"end"' in lines[-1], f"the action log holds the controls and its end ({len(lines)} lines)")
            r = subprocess.run([a.heartwave, "run", str(work / "case.toml"), "--replay", str(log), "--backend", "cpu",
                                "--threads", "1", "--quiet"], cwd=work, capture_output=True, text=True, timeout=120)
            expect(r.returncode == 0 and "replay:" in r.stdout, f"the log replays: {r.stdout.strip()} {r.stderr.strip()[-300:]}")
        finally:
            d.quit()
        if a.gallery:
            gallery_shots(a.heartwave, work, Path(a.gallery), browser)
        return 0
    except Failure as e:
        print(f"FAIL {e}")
        return 1
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                out, _ = proc.communicate(timeout=20)
                print(out[-2000:] if out else "", end="")
            except subprocess.TimeoutExpired:
                proc.kill()

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
