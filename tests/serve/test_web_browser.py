"""The web page in a real browser: headless Chromium from the Debian packages (``chromium``, ``chromium-driver``;
``.ci/run`` installs them), driven by Selenium, against a real server with the embedded default and a trial index.
Without Chromium these tests skip, except under CI, where a missing browser is a failure."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the service tests need the [serve] extras")
webdriver = pytest.importorskip("selenium.webdriver", reason="the browser tests need the [test] extras (selenium)")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from medlink import Linker  # noqa: E402
from medlink.serve.app import create_app  # noqa: E402
from medlink.serve.settings import ServiceSettings  # noqa: E402
from support import TRIALS, serving, two_trial_matcher  # noqa: E402

pytestmark = pytest.mark.slow  # the embedded default's index, and a browser

PHONE = (375, 740)  # CSS pixels of a small phone


def chromium_paths() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def new_browser(width: int = 1200, height: int = 900) -> webdriver.Chrome:
    paths = chromium_paths()
    if paths is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: apt-get install chromium chromium-driver (.ci/run does)")
        pytest.skip("Chromium is not installed here (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    # The driver path is given, so Selenium Manager never tries to download one.
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=paths[1]))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    linker = Linker.load()
    matcher = two_trial_matcher(linker, tmp_path_factory.mktemp("web") / "trial-index")
    yield from serving(create_app(linker, ServiceSettings(), matcher))


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    driver = new_browser()
    yield driver
    driver.quit()


def wait_for(driver: webdriver.Chrome, css: str):
    return WebDriverWait(driver, 60).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))


def test_a_term_typed_and_submitted_links_with_its_stage(browser: webdriver.Chrome, url: str) -> None:
    browser.get(f"{url}/")
    box = browser.find_element(By.ID, "q")
    box.send_keys("heart attack")
    browser.find_element(By.CSS_SELECTOR, "#link-form button[type=submit]").click()
    result = wait_for(browser, ".result")
    assert result.find_element(By.CSS_SELECTOR, ".concept-id").text == "MESH:D009203"
    assert result.find_element(By.CSS_SELECTOR, ".stage").text == "exact"
    assert result.find_element(By.CSS_SELECTOR, ".preferred").text == "Myocardial Infarction"
    assert "q=heart+attack" in browser.current_url  # the address reproduces the query


def test_a_concept_link_opens_its_page(browser: webdriver.Chrome, url: str) -> None:
    browser.get(f"{url}/?q=heart+attack")
    wait_for(browser, ".result .concept-id").click()
    heading = wait_for(browser, "h1")
    assert "Myocardial Infarction" in heading.text and "MESH:D009203" in heading.text
    parents = browser.find_elements(By.CSS_SELECTOR, ".related")[0].text
    assert "Myocardial Ischemia" in parents
    assert "C14.280.647.500" in browser.find_element(By.CSS_SELECTOR, ".tree").text


def test_script_typed_as_a_term_is_shown_as_text(browser: webdriver.Chrome, url: str) -> None:
    attack = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    browser.get(f"{url}/")
    browser.find_element(By.ID, "q").send_keys(attack)
    browser.find_element(By.CSS_SELECTOR, "#link-form button[type=submit]").click()
    mention = wait_for(browser, ".result .mention")
    assert mention.text == attack
    assert browser.execute_script("return window.pwned === undefined")
    assert not browser.find_elements(By.CSS_SELECTOR, "main img")


def test_the_keyboard_alone_links_a_term(browser: webdriver.Chrome, url: str) -> None:
    browser.get(f"{url}/")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)  # the skip link first
    active = browser.switch_to.active_element
    assert active.text == "Skip to content"
    browser.find_element(By.ID, "q").send_keys("Crohn's disease", Keys.CONTROL, Keys.ENTER)
    assert wait_for(browser, ".result .concept-id").text == "MESH:D003424"


def test_a_note_ranks_trials_with_their_evidence(browser: webdriver.Chrome, url: str) -> None:
    browser.get(f"{url}/trials")
    browser.find_element(By.ID, "note").send_keys("A 61-year-old man with type 2 diabetes on metformin.")
    browser.find_element(By.CSS_SELECTOR, "#match-form button[type=submit]").click()
    first = wait_for(browser, ".trial")
    link = first.find_element(By.CSS_SELECTOR, "h3 a")
    assert link.text == "NCT1" and link.get_attribute("href") == "https://clinicaltrials.gov/study/NCT1"
    assert "Diabetes Mellitus, Type 2" in first.find_element(By.CSS_SELECTOR, ".shared").text
    assert first.find_element(By.CSS_SELECTOR, ".age").text == "eligible"
    assert "Type 2 diabetes" in first.find_element(By.CSS_SELECTOR, ".met").text
    decided = first.find_element(By.CSS_SELECTOR, ".criteria li.met")
    assert decided.text.startswith("inclusion met: Type 2 diabetes") and "note:" in decided.text
    second = browser.find_elements(By.CSS_SELECTOR, ".trial")[1]
    assert second.find_element(By.CSS_SELECTOR, ".age").text == "not eligible"  # the children's trial


def test_a_record_from_a_file_is_normalized(browser: webdriver.Chrome, url: str) -> None:
    browser.get(f"{url}/trials")
    browser.find_element(By.ID, "record-file").send_keys(str(Path(TRIALS / "api_v2_study.json").resolve()))
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "record").get_attribute("value"))
    browser.find_element(By.CSS_SELECTOR, "#normalize-form button[type=submit]").click()
    table = wait_for(browser, "table.normalized")
    assert "NCT90000003" in browser.page_source
    assert table.find_elements(By.CSS_SELECTOR, "a[href^='/concept/MESH']")


def test_the_page_fits_a_phone(url: str) -> None:
    phone = new_browser(*PHONE)
    try:
        phone.get(f"{url}/?q=myocardial+infarctoin%0Aibuprofen+600+mg+tab")
        wait_for(phone, ".result")
        overflow = phone.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than a phone"
    finally:
        phone.quit()
