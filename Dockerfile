# The pmv6 reference v6 server as an image: `pmv6 serve` on $PMV6_HOST:$PORT (0.0.0.0:80), data in
# memory. Configure with -e PMV6_ADMIN_PASSWORD=… -e PMV6_CONTROL_TOKEN=… (-e PMV6_ADMIN_USER, -e PORT).
# Build with `npm run image` (tag pmv6-reference:local). No RUN step and no registry access: the
# build copies this checkout with its installed node_modules (better-sqlite3 is a native addon
# built for the Node that ran `npm ci`), so BASE must carry the same Node major and a glibc at
# least as new; `npm run image` picks node:<major>-bookworm-slim, or, when that cannot be pulled,
# pmv6-node-base:local made from this machine's Node (fixtures/container/make-base-image.sh).
ARG BASE=node:20-bookworm-slim
FROM ${BASE}
LABEL org.opencontainers.image.title="pmv6 reference server" \
      io.pmv6.reference="1"
WORKDIR /app
COPY . .
ENV NODE_ENV=production PMV6_HOST=0.0.0.0 PORT=80
EXPOSE 80
USER 1000:1000
CMD ["node", "bin/pmv6.js", "serve"]
