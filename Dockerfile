# The gradegate GitHub Action: the static gradegate binary on top of Python.
# Two images come from this file:
#   slim  Python and its standard library only  (docker build --target slim .)
#   full  slim plus the grader image tag's packages and NLTK data (the last
#         stage, so the default of `docker build .` and of action.yml)
# slim.Dockerfile repeats the build and slim stages for the slim action path
# on a source checkout; a test holds the two files in step.
#
# Base images are pinned by digest so that the same commit builds the same
# bytes; the tag beside the digest says what it was. To bump one, resolve the
# tag's current multi-platform index digest and replace both:
#   docker buildx imagetools inspect golang:1.26       (the "Digest:" line)
#   docker buildx imagetools inspect python:3.12-slim
# Dependabot (.github/dependabot.yml) proposes the same bump weekly. The
# release workflow checks that each digest is an index with linux/amd64 and
# linux/arm64 before it builds.

# ---- build: a static binary, no cgo, so the runtime image needs no Go.
# It runs on the builder's own platform and cross-compiles for the target
# one: Go needs no emulation to build for arm64.
FROM --platform=$BUILDPLATFORM golang:1.26@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647 AS build
# Set by BuildKit for every build (empty under the legacy builder, where Go
# then builds for the machine it runs on).
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version comes from a file in the build context, not a build argument:
# `image: Dockerfile` in action.yml gives no way to pass one, and every
# results document records it as versions.gradegate.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X main.version=$(cat cmd/gradegate/VERSION)" -o /out/gradegate ./cmd/gradegate

# ---- slim: Python for graders that import nothing but the standard library.
FROM python:3.12-slim@sha256:e5c9fa26ffb76e11e0f054f30dc2523a2f9693f0c36c0cf1e39b27e152d899fc AS slim

# GRADEGATE_IMAGE tells gradegate which image it runs in: the grader lint
# holds an import this image does not install.
ENV GRADEGATE_IMAGE=slim \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONUNBUFFERED=1

COPY --from=build /out/gradegate /usr/local/bin/gradegate

# No USER line on purpose: GitHub runs container actions as root (the
# workspace and file-command mounts belong to the runner), and gradegate's
# sandbox drops every grader to its own unprivileged uid, which it can do
# only when started as root.
ENTRYPOINT ["/usr/local/bin/gradegate"]

# ---- full: the packages of the grader image tags.
FROM slim AS full

ENV GRADEGATE_IMAGE=full

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

ENTRYPOINT ["/usr/local/bin/gradegate"]
