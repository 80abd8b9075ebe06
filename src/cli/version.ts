/**
 * The toolkit's version, as `school --version` prints it. Kept equal to package.json's `version`
 * (a test checks it, and the release workflow refuses a tag that differs), so the bundled CLI needs
 * no package.json at run time.
 */
export const VERSION = '0.1.0';
