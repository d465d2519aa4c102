# The pmv6 runner image: the installed package (production dependencies only) and Node, `pmv6` as
# the entrypoint, run as an unprivileged user. Built by `npm run image:runner`
# (package/build-runner-image.sh), whose build context is a folder where package/install.mjs
# installed the packed tarball; no RUN step, no registry.
#   docker run --rm --network host --user "$(id -u):$(id -g)" -e PMV6_USER -e PMV6_PASSWORD \
#     -v "$PWD/pmv6-report:/work/pmv6-report" pmv6:local run --target https://tpm.example.com
# Decision (issue 36): the reports and the journals go to the mounted folder without a flag
# (PMV6_REPORT_DIR, PMV6_STATE_DIR), written as the user the container runs as: `--user` the
# folder's owner (a bind mount keeps the host's owner; uid 1000 could not write into it).
ARG BASE=node:20-bookworm-slim
FROM ${BASE}
LABEL org.opencontainers.image.title="pmv6" \
      org.opencontainers.image.description="Conformance suite and load harness for the Password Manager Service REST API v6" \
      io.pmv6.runner="1"
COPY app /opt/pmv6
COPY --chown=1000:1000 work /work
WORKDIR /work
ENV NODE_ENV=production HOME=/work PMV6_REPORT_DIR=/work/pmv6-report PMV6_STATE_DIR=/work/pmv6-report/state
USER 1000:1000
ENTRYPOINT ["node", "/opt/pmv6/node_modules/pmv6/bin/pmv6.js"]
CMD ["--help"]
