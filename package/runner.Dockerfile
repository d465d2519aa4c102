# The pmv6 runner image: the installed package (production dependencies only) and Node, `pmv6` as
# the entrypoint, run as an unprivileged user. Built by `npm run image:runner`
# (package/build-runner-image.sh), whose build context is a folder where package/install.mjs
# installed the packed tarball; no RUN step, no registry.
#   docker run --rm --network host -v "$PWD/report:/work/pmv6-report" pmv6:local \
#     run --target https://tpm.example.com --user admin --password "$PW"
ARG BASE=node:20-bookworm-slim
FROM ${BASE}
LABEL org.opencontainers.image.title="pmv6" \
      org.opencontainers.image.description="Conformance suite and load harness for the Password Manager Service REST API v6" \
      io.pmv6.runner="1"
COPY app /opt/pmv6
COPY --chown=1000:1000 work /work
WORKDIR /work
ENV NODE_ENV=production HOME=/work
USER 1000:1000
ENTRYPOINT ["node", "/opt/pmv6/node_modules/pmv6/bin/pmv6.js"]
CMD ["--help"]
