# syntax=docker/dockerfile:1
# One image for every component of the chart (charts/gardener-ipv6): its entrypoint is the `gardener-ipv6` command.
#   docker build -t gardener-ipv6:dev .
#   docker run --rm gardener-ipv6:dev validate -f - < examples/shoot-ipv6.yaml
ARG NODE_VERSION=20

# Compiles the TypeScript sources (needs the dev dependencies: typescript).
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# The runtime dependencies only.
FROM node:${NODE_VERSION}-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# distroless: node and nothing else (no shell, no package manager), running as the unprivileged user 65532.
FROM gcr.io/distroless/nodejs${NODE_VERSION}-debian12:nonroot AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY bin ./bin
# Read at run time: the calico chart the network extension renders.
COPY charts/internal ./charts/internal
USER 65532:65532
EXPOSE 9443 8080
# Node flags for a long-running server: src/runtime/node-flags.ts says why.
ENTRYPOINT ["/nodejs/bin/node", "--no-memory-reducer", "/app/bin/gardener-ipv6.js"]
CMD ["--help"]
