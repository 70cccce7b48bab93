"""
The page of `lal-serve` in a real browser: Debian's Chromium, headless, driven by Selenium
through Debian's chromedriver (nothing downloads a browser). The test types two sentences,
presses Parse, and checks that the page draws, for each sentence, the constituent labels of
the tree the API gives for it, with confidences and the label attention views; it saves a
screenshot to runs/screenshots/lal-serve-page.png.

Chromium and chromedriver come from `make browser` (`make test` runs it when it can install
Debian packages); without them these tests are skipped, saying so.
"""
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import requests
from nltk import Tree

from tests.conftest import REPO_ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCREENSHOT = REPO_ROOT / "runs" / "screenshots" / "lal-serve-page.png"
SENTENCES = ["The cat sat on the mat .", "Dogs bark ."]

pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
    reason="needs Debian's chromium and chromium-driver: run `make browser`",
)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="lal-chromium-")
    # Headless, and quiet on the network: without the background-networking switches Chromium
    # keeps trying to reach Google's hosts, which a closed machine refuses.
    for argument in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--window-size=1400,1800",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _labels(tree_string: str):
    """The constituent labels of a tree, in the order the page draws them (pre-order)."""
    return [node.label() for node in Tree.fromstring(tree_string).subtrees() if node.height() > 2]


def test_typing_sentences_draws_their_trees(served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    api = requests.post(
        f"{served}/parse", json={"sentences": SENTENCES, "confidence": True}, timeout=60
    ).json()["parses"]

    browser.get(served + "/")
    wait = WebDriverWait(browser, 60)
    wait.until(lambda b: "sentences up to" in b.find_element(By.ID, "model").text)
    box = browser.find_element(By.ID, "sentences")
    box.clear()
    box.send_keys("\n".join(SENTENCES))
    browser.find_element(By.ID, "parse").click()
    wait.until(lambda b: b.find_element(By.ID, "results").get_attribute("data-state") != "parsing"
               and b.find_element(By.ID, "results").get_attribute("data-state") != "empty")
    results = browser.find_element(By.ID, "results")
    assert results.get_attribute("data-state") == "done", browser.find_element(By.ID, "status").text

    sections = results.find_elements(By.CSS_SELECTOR, "section.parse")
    assert len(sections) == len(SENTENCES)
    for section, sentence, parse in zip(sections, SENTENCES, api):
        assert section.find_element(By.TAG_NAME, "h2").text == sentence
        drawn = [
            node.get_attribute("textContent")
            for node in section.find_elements(By.CSS_SELECTOR, ".picture svg text.label")
        ]
        assert drawn == _labels(parse["tree"])
        words = [
            node.get_attribute("textContent")
            for node in section.find_elements(By.CSS_SELECTOR, ".picture svg text.word")
        ]
        assert words == parse["words"]
        assert "Constituent confidence" in section.find_element(By.CLASS_NAME, "confidence").text
        sure = section.find_element(By.CLASS_NAME, "sentence-confidence").text
        assert f"Sentence confidence {parse['sentence_confidence']:.3f}" in sure
        assert section.find_elements(By.CSS_SELECTOR, "details.attention svg.heatmap")
        assert section.find_elements(By.CSS_SELECTOR, "details.contributions svg.heatmap")
    # The drawn tree is laid out: its boxes have a size on the page.
    first_box = sections[0].find_element(By.CSS_SELECTOR, ".picture svg rect")
    assert first_box.size["width"] > 0 and first_box.size["height"] > 0

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000


def test_a_refused_sentence_shows_the_servers_reason(served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served + "/")
    wait = WebDriverWait(browser, 60)
    wait.until(lambda b: "sentences up to" in b.find_element(By.ID, "model").text)
    box = browser.find_element(By.ID, "sentences")
    box.clear()
    box.send_keys("word " * 61)
    browser.find_element(By.ID, "parse").click()
    wait.until(lambda b: b.find_element(By.ID, "results").get_attribute("data-state") == "error")
    status = browser.find_element(By.ID, "status").text
    assert "sentences[0]: the sentence has 61 words, more than the limit of 60" in status
