# The gradegate GitHub Action: the static gradegate binary on top of Python
# with the package set of the supported grader image tags (SPEC section 10).

# ---- build: a static binary, no cgo, so the runtime image needs no Go.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version comes from a file in the build context, not a build argument:
# `image: Dockerfile` in action.yml gives no way to pass one, and every
# results document records it as versions.gradegate.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(cat cmd/gradegate/VERSION)" -o /out/gradegate ./cmd/gradegate

# ---- runtime: Python for the graders.
FROM python:3.12-slim

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONUNBUFFERED=1

# Image tag 2025-05-08: the packages a grader may import, pinned in the
# requirements file (which says what is and is not pinned). Wheels only, so
# that no package's setup.py runs at build time; rouge-score 0.1.2 is
# published as a source distribution only (pure Python), so it alone is
# built, by setuptools in pip's isolated build environment. A dependency
# that comes to lack a wheel fails the build here rather than compiling.
COPY cmd/gradegate/image/requirements-2025-05-08.txt /tmp/requirements-2025-05-08.txt
RUN pip install --no-cache-dir --only-binary=:all: --no-binary=rouge-score \
        -r /tmp/requirements-2025-05-08.txt \
    && rm /tmp/requirements-2025-05-08.txt

# NLTK corpora, fetched now because graders have no network. The directory is
# on NLTK's default search path, so graders find it without NLTK_DATA (which
# the sandbox's allowlisted environment would not pass on). punkt_tab is what
# nltk 3.9's tokenizers load in place of the punkt pickles.
RUN python -m nltk.downloader -d /usr/local/share/nltk_data \
        punkt punkt_tab stopwords wordnet omw-1.4 names \
    && chmod -R a+rX /usr/local/share/nltk_data

COPY --from=build /out/gradegate /usr/local/bin/gradegate

# No USER line on purpose: GitHub runs container actions as root (the
# workspace and file-command mounts belong to the runner), and gradegate's
# sandbox drops every grader to its own unprivileged uid, which it can do
# only when started as root.
ENTRYPOINT ["/usr/local/bin/gradegate"]
