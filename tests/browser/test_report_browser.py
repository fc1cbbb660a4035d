"""pijit.report's page in a real browser (issue 15): headless Chromium opens it from file:// with no
network and must log no SEVERE console error; the summary, functions and break reasons are on the
page as text (escaped, not markup); expanding a function shows its graph and guards; a #fn- link
opens its section. Runs on the system python3 with Debian's python3-selenium, chromium and
chromium-driver; without them it says so and counts nothing. Last line: "N passed, N failed".

    PYTHONPATH=pyscripts /usr/bin/python3 tests/browser/test_report_browser.py
"""
import glob
import os
import re
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "pyscripts")]

try:  # pijit's extension must be built for this python (build/ makes the 3.11 one too)
    from pijit import report
    from test_report import BREAK_MSG, KEYS, make_fixture, run_with_dump
    PIJIT_ERROR = None
except ImportError as e:
    PIJIT_ERROR = "pijit does not import on Python %s: %s" % (sys.version.split()[0], e)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    webdriver = None


def capturing_python():
    """A Python pijit captures on (3.7-3.10; pyenv's, as tools/find_python.sh finds them) for the real run:
    this suite's own python3 is newer."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for v in ("3.9", "3.7", "3.10", "3.8"):
        found = sorted(glob.glob(os.path.join(root, "versions", v + ".*", "bin", "python")))
        if found:
            return found[-1]
    return None


def missing():
    """Why the browser tests cannot run here, or None."""
    if PIJIT_ERROR:
        return PIJIT_ERROR
    if webdriver is None:
        return "python3-selenium is not installed"
    if not CHROMIUM or not DRIVER:
        return "chromium or chromium-driver is not installed"
    return None


def cannot_run(why):
    """A skip where the browser packages may be absent; a failure where the test matrix installed them
    (PIJIT_REQUIRE_BROWSER=1, set by tools/run_tests.sh after tools/deps.sh): a report page broken by a
    missing package must not pass as skipped."""
    if os.environ.get("PIJIT_REQUIRE_BROWSER") == "1":
        raise RuntimeError("the browser suite cannot run: " + why)
    raise unittest.SkipTest(why)


def start_browser(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--user-data-dir=" + profile, "--window-size=1400,1000"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    driver.set_page_load_timeout(60)
    return driver


class PageTest(unittest.TestCase):
    """One browser and one page per class; make_dump(root) -> dump dir."""
    driver = None

    @classmethod
    def setUpClass(cls):
        why = missing()
        if why:
            cannot_run(why)
        cls.tmp = tempfile.TemporaryDirectory()
        try:
            cls.dump = cls.make_dump(cls.tmp.name)
            cls.page = os.path.join(cls.tmp.name, "report.html")
            report.write_report(cls.dump, cls.page)
            cls.driver = start_browser(os.path.join(cls.tmp.name, "profile"))
        except BaseException:
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.driver is not None:
            cls.driver.quit()
        cls.tmp.cleanup()

    def load(self, fragment=""):
        self.driver.get("file://" + self.page + fragment)
        return self.driver

    def shown(self, el):
        """is_displayed, and Chrome's own answer: Selenium 4.8's check sees a closed <details> hide only
        its direct children, so content nested deeper reads as displayed."""
        return el.is_displayed() and self.driver.execute_script(
            "return !arguments[0].checkVisibility || arguments[0].checkVisibility()", el)

    def severe(self):
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def expand(self, key):
        """Clicks the function's <summary>; returns its <details>."""
        section = self.driver.find_element(By.ID, "fn-" + key)
        self.assertIsNone(section.get_attribute("open"))
        self.driver.execute_script("arguments[0].scrollIntoView()", section)
        section.find_element(By.TAG_NAME, "summary").click()
        self.assertIsNotNone(section.get_attribute("open"))
        return section


class FixturePage(PageTest):
    @staticmethod
    def make_dump(root):
        return make_fixture(root)[0]

    def test_loads_without_console_errors(self):
        d = self.load()
        self.assertEqual(d.title.split(":")[0], "pijit report")
        self.assertTrue(d.find_element(By.ID, "summary").is_displayed())
        self.assertEqual(self.severe(), [])

    def test_functions_and_break_reasons(self):
        d = self.load()
        ids = [e.get_attribute("id") for e in d.find_elements(By.CSS_SELECTOR, "details.function")]
        self.assertEqual(sorted(ids), sorted("fn-" + k for k in KEYS))
        # the reason shows as text, quotes and brackets included: escaped, never parsed as markup
        line = d.find_element(By.CSS_SELECTOR, 'details.file[open] .line.broken[data-line="5"]')
        self.assertIn(BREAK_MSG, line.find_element(By.CLASS_NAME, "break-reason").text)
        self.assertIn(BREAK_MSG, line.get_attribute("title"))
        self.assertEqual(d.find_elements(By.CSS_SELECTOR, ".break-reason b"), [])
        self.assertEqual(d.find_element(By.CSS_SELECTOR, '.line[data-line="4"]').get_attribute("class"),
                         "line captured")
        self.assertFalse(self.shown(d.find_element(By.CSS_SELECTOR, "details.file.pijit .line")))
        self.assertEqual(self.severe(), [])

    def test_expanding_shows_graph_and_guards(self):
        self.load()
        # div.graph: graphviz's SVG has a <g class="graph"> of its own
        graphs = self.driver.find_elements(By.CSS_SELECTOR, "#fn-%s div.graph" % KEYS[0])
        self.assertEqual(len(graphs), 2)
        guards = self.driver.find_elements(By.CSS_SELECTOR, "#fn-%s .guards" % KEYS[0])
        self.assertEqual(len(guards), 2)
        self.assertFalse(any(self.shown(e) for e in graphs + guards))
        section = self.expand(KEYS[0])
        self.assertTrue(all(self.shown(e) for e in graphs + guards))
        self.assertTrue(self.shown(graphs[0].find_element(By.TAG_NAME, "svg")))
        self.assertIn("x<2>", graphs[1].find_element(By.CSS_SELECTOR, "pre.dot").text)
        self.assertIn("<not aliased>", guards[0].text)
        self.assertFalse(self.shown(section.find_element(By.CSS_SELECTOR, "details.bytecode pre")))
        self.assertEqual(self.severe(), [])

    def test_link_opens_its_section(self):
        d = self.load("#fn-" + KEYS[2])
        self.assertIsNotNone(d.find_element(By.ID, "fn-" + KEYS[2]).get_attribute("open"))
        self.assertEqual(self.severe(), [])


class RealRunPage(PageTest):
    """The same checks on a page of a real run."""
    @staticmethod
    def make_dump(root):
        python = capturing_python()
        if python is None:
            cannot_run("no Python 3.7-3.10 (pyenv) for a real run: pijit captures on those only")
        return run_with_dump(root, python)[0]

    def test_loads_and_expands(self):
        d = self.load()
        self.assertTrue(d.find_element(By.ID, "summary").is_displayed())
        sections = d.find_elements(By.CSS_SELECTOR, "details.function")
        self.assertTrue(sections, "the page shows no function: run.json lists none")
        key = sections[0].get_attribute("id")[len("fn-"):]
        section = self.expand(key)
        shown = section.find_elements(By.CSS_SELECTOR, "div.graph, .guards")
        self.assertTrue(shown and all(self.shown(e) for e in shown))
        self.assertEqual(self.severe(), [])

    def test_the_program_s_function_and_break_are_shown(self):
        d = self.load()
        f = [s for s in d.find_elements(By.CSS_SELECTOR, "details.function") if re.match(r"fn-\d+_f_prog_3$",
                                                                                          s.get_attribute("id"))]
        self.assertTrue(f, "no section for f (prog.py:3)")  # (and one for its resume function)
        broken = d.find_elements(By.CSS_SELECTOR, '.line.broken[data-line="5"]')
        self.assertTrue(broken, "line 5 (y.tolist()) is not shown broken")
        reason = broken[0].find_element(By.CSS_SELECTOR, ".break-reason").text
        self.assertIn("B002", reason)
        self.assertTrue(d.find_elements(By.CSS_SELECTOR, '.line.captured[data-line="4"]'), "line 4 (x * 2) not captured")
        section = self.expand(f[0].get_attribute("id")[len("fn-"):])
        self.assertIn("B002", section.text)
        self.assertEqual(self.severe(), [])


class CountingResult(unittest.TextTestResult):
    passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


if __name__ == "__main__":
    print("pijit report page in headless Chromium (%s, %s)" % (CHROMIUM, DRIVER))
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(resultclass=CountingResult, stream=sys.stdout, verbosity=2).run(suite)
    for test, reason in result.skipped:
        print("skipped: %s: %s" % (test.id(), reason))
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print("%d passed, %d failed" % (result.passed, failed))
    sys.exit(1 if failed else 0)
