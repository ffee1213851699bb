/** The service version and the API versions it accepts (Nautobot 1.6: 1.2 … 1.6; responses are the 1.2 shapes). */
export const API_VERSIONS = ["1.2", "1.3", "1.4", "1.5", "1.6"];
export const DEFAULT_API_VERSION = "1.2";
export const VERSION = "0.1.0";
