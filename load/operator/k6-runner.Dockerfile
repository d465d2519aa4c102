# The k6 runner image of the k6-operator TestRun (load/operator/README.md): a static k6, `sh` for
# the operator's LocalFile check, the CA bundle, and pmv6's k6 scripts at /pmv6 as the TestRun
# names them (/pmv6/load/k6/<scenario>.js, /pmv6/load/scenarios, /pmv6/core/signed-uri.js).
# Built by `npm run image:k6` (load/operator/build-k6-image.sh), whose build context holds the
# rootfs it assembled from this machine: FROM scratch, no RUN step, no registry.
FROM scratch
LABEL org.opencontainers.image.title="pmv6-k6" \
      org.opencontainers.image.description="k6 with the pmv6 load scripts, for the k6-operator" \
      io.pmv6.k6="1"
COPY rootfs/ /
ENV PATH=/usr/bin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PMV6_SUMMARY_DIR=/pmv6/out \
    K6_NO_USAGE_REPORT=true
WORKDIR /pmv6/out
USER 1000:1000
ENTRYPOINT ["k6"]
CMD ["version"]
