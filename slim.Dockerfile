# The slim gradegate image alone: the build and slim stages of Dockerfile,
# for the slim action path (slim/action.yml) on a source checkout, whose
# Docker build cannot pick a stage of Dockerfile. Edit Dockerfile and copy
# its first two stages here; cmd/gradegate/dockerfile_test.go fails until
# the two agree.

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
