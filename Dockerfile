# The inventory service as a container (docs/DEPLOYMENT.md). Not built in the project's CI (no container
# runtime there); the steps are the production install the CLI tests exercise (`npm ci --omit=dev`).
FROM node:24-slim
ENV NODE_ENV=production INVENTORY_HOST=0.0.0.0 INVENTORY_PORT=8080 \
    INVENTORY_DATABASE_URL=sqlite:/var/lib/inventory/inventory.sqlite3
WORKDIR /opt/inventory
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY data ./data
COPY LICENSE README.md ./
RUN useradd --system --home /var/lib/inventory inventory && mkdir -p /var/lib/inventory \
    && chown inventory:inventory /var/lib/inventory
USER inventory
VOLUME /var/lib/inventory
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:8080/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "bin/inventory.js"]
CMD ["serve"]
