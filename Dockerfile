# The gradegate GitHub Action: the static gradegate binary on top of Python
# with the package set of the supported grader image tags (SPEC section 10).

# ---- build: a static binary, no cgo, so the runtime image needs no Go.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION is stamped into main.version (gradegate version, results "versions.gradegate").
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/gradegate ./cmd/gradegate

# ---- runtime: Python for the graders.
FROM python:3.12-slim

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONUNBUFFERED=1

# Image tag 2025-05-08: the packages a grader may import, pinned exactly as
# OpenAI's hosted Python grader documents them. Changing this list means a new
# image tag; cmd/gradegate/dockerfile_test.go holds the list it must match.
RUN pip install --no-cache-dir \
        numpy==2.2.4 \
        scipy==1.15.2 \
        sympy==1.13.3 \
        pandas==2.2.3 \
        rapidfuzz==3.10.1 \
        scikit-learn==1.6.1 \
        rouge-score==0.1.2 \
        deepdiff==8.4.2 \
        jsonschema==4.23.0 \
        pydantic==2.10.6 \
        pyyaml==6.0.2 \
        nltk==3.9.1 \
        sqlparse==0.5.3 \
        rdkit==2024.9.6 \
        scikit-bio==0.6.3 \
        ast-grep-py==0.36.2

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
