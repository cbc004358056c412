# Gatehouse container image. Build: docker build -t gatehouse .
# With podman: podman build --format docker -t gatehouse . (the OCI format drops HEALTHCHECK).

# The base image; a build argument only so a test can substitute a local stand-in for it.
ARG NODE_IMAGE=node:20-alpine

# Stage 1: compile TypeScript (needs the dev dependencies).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build-page-scripts.mjs ./scripts/
COPY src ./src
# The pages' browser code bundled with its CSP hashes (dist/pages/built-scripts.js), then tsc: the
# image runs dist/ (npm run build would also bundle dist/gatehouse.mjs, which it does not use).
RUN node scripts/build-page-scripts.mjs --dist && npx tsc -p tsconfig.build.json

# Stage 2: runtime. There are no runtime dependencies, so no node_modules.
FROM ${NODE_IMAGE}
WORKDIR /app
ENV GATEHOUSE_HOST=0.0.0.0 GATEHOUSE_DATA_DIR=/data
# package.json is needed at run time: its "type": "module" makes node load dist/ as ES modules.
COPY --from=build /app/package.json ./
COPY --from=build /app/dist ./dist
# Prepare /data before VOLUME: changes made to a volume path after VOLUME are discarded.
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
VOLUME /data
USER node
EXPOSE 3000
# No curl in alpine; node has fetch. Follows GATEHOUSE_PORT if it is overridden.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.GATEHOUSE_PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "dist/cli.js", "serve"]
